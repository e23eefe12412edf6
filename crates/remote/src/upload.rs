//! Streams a run's record to object storage while the run goes. The engine's coordinator
//! hands over each interval and goes on at once; an uploader thread puts them up in batches
//! (one `.hlog` and one `.jsonl` object per batch, every `every`), the first interval at once
//! so a listing shows the run has begun. A failed upload stops the uploading, never the run:
//! the next interval returns the error, which the caller names at the end (exit 3).

use crate::error::RemoteError;
use crate::layout::batch_keys;
use crate::store::Remote;
use loadlab_metrics::clock::ClockEstimate;
use loadlab_record::{
    IntervalLines, IntervalRecord, RecordEnd, RecordMeta, RecordSink, END_FILE, META_FILE,
};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the uploads cost, for the run's last words and the benchmark.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UploadStats {
    pub batches: u32,
    pub intervals: u32,
    pub puts: u32,
    pub bytes: u64,
    /// Wall time spent in PUTs (the uploader thread's, not the load's).
    pub put_seconds: f64,
    pub max_put_seconds: f64,
}

enum Msg {
    Begin(Vec<u8>),
    Interval { hlog: String, counters: String },
    End(Vec<u8>),
}

#[derive(Default)]
struct Shared {
    failed: Option<String>,
    stats: UploadStats,
}

/// A [`RecordSink`] into object storage (under `segments/<i>/` or `run/` of a run's prefix).
pub struct UploadSink {
    tx: Option<Sender<Msg>>,
    done: Receiver<()>,
    shared: Arc<Mutex<Shared>>,
    /// Each error kind's example goes up once.
    lines: IntervalLines,
    clock: Option<ClockEstimate>,
    url: String,
    /// How long `end` waits for the last uploads.
    end_timeout: Duration,
}

impl UploadSink {
    /// Starts the uploader for the record directory `remote` (e.g. `…/segments/2`), putting a
    /// batch up every `every`; `clock` is written into the record's header.
    pub fn start(
        remote: &Remote,
        every: Duration,
        clock: Option<ClockEstimate>,
    ) -> Result<UploadSink, RemoteError> {
        let remote = remote.for_thread()?;
        let url = remote.url().to_string();
        let (tx, rx) = mpsc::channel();
        let (done_tx, done) = mpsc::channel();
        let shared = Arc::new(Mutex::new(Shared::default()));
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name("loadlab-upload".into())
            .spawn(move || {
                let mut uploader = Uploader {
                    remote,
                    every,
                    shared: thread_shared.clone(),
                    hlog: String::new(),
                    counters: String::new(),
                    pending: 0,
                    batch: 0,
                    last: None,
                };
                if let Err(e) = uploader.run(&rx) {
                    thread_shared.lock().expect("upload state").failed = Some(e.to_string());
                }
                let _ = done_tx.send(());
            })?;
        Ok(UploadSink {
            tx: Some(tx),
            done,
            shared,
            lines: IntervalLines::default(),
            clock,
            url,
            end_timeout: Duration::from_secs(120),
        })
    }

    /// A handle that reads the upload figures after the sink was handed to the engine.
    pub fn stats_handle(&self) -> impl Fn() -> UploadStats + Send + 'static {
        let shared = self.shared.clone();
        move || shared.lock().expect("upload state").stats.clone()
    }

    fn send(&mut self, msg: Msg) -> std::io::Result<()> {
        if let Some(e) = &self.shared.lock().expect("upload state").failed {
            return Err(std::io::Error::other(e.clone()));
        }
        let tx = self
            .tx
            .as_ref()
            .ok_or_else(|| std::io::Error::other("the record was already ended"))?;
        tx.send(msg)
            .map_err(|_| std::io::Error::other(format!("{}: the uploader stopped", self.url)))
    }
}

impl RecordSink for UploadSink {
    fn begin(&mut self, meta: &RecordMeta) -> std::io::Result<()> {
        let mut meta = meta.clone();
        meta.clock = self.clock.clone();
        let text = serde_json::to_string_pretty(&meta).expect("a record header serializes") + "\n";
        self.send(Msg::Begin(text.into_bytes()))
    }

    fn interval(&mut self, interval: &IntervalRecord) -> std::io::Result<()> {
        let (hlog, counters) = self.lines.of(interval);
        self.send(Msg::Interval { hlog, counters })
    }

    fn end(&mut self, end: &RecordEnd) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(end).expect("a record end serializes") + "\n";
        self.send(Msg::End(text.into_bytes()))?;
        self.tx = None;
        if self.done.recv_timeout(self.end_timeout).is_err() {
            return Err(std::io::Error::other(format!(
                "{}: the last uploads did not finish within {} s",
                self.url,
                self.end_timeout.as_secs()
            )));
        }
        match &self.shared.lock().expect("upload state").failed {
            Some(e) => Err(std::io::Error::other(e.clone())),
            None => Ok(()),
        }
    }
}

struct Uploader {
    remote: Remote,
    every: Duration,
    shared: Arc<Mutex<Shared>>,
    hlog: String,
    counters: String,
    pending: u32,
    batch: u32,
    last: Option<Instant>,
}

impl Uploader {
    fn run(&mut self, rx: &Receiver<Msg>) -> Result<(), RemoteError> {
        loop {
            match rx.recv_timeout(self.every) {
                Ok(Msg::Begin(meta)) => self.put(META_FILE, meta)?,
                Ok(Msg::Interval { hlog, counters }) => {
                    self.hlog.push_str(&hlog);
                    self.counters.push_str(&counters);
                    self.pending += 1;
                    if self.last.is_none_or(|t| t.elapsed() >= self.every) {
                        self.flush()?;
                    }
                }
                Ok(Msg::End(end)) => {
                    self.flush()?;
                    return self.put(END_FILE, end);
                }
                Err(RecvTimeoutError::Timeout) => self.flush()?,
                // The sink was dropped without an end (the run failed): keep what ran.
                Err(RecvTimeoutError::Disconnected) => return self.flush(),
            }
        }
    }

    /// Puts the pending intervals up as the next batch: histograms first, then the counters
    /// that commit them.
    fn flush(&mut self) -> Result<(), RemoteError> {
        if self.pending == 0 {
            return Ok(());
        }
        let (hlog_key, counters_key) = batch_keys(self.batch);
        self.put(&hlog_key, self.hlog.clone().into_bytes())?;
        self.put(&counters_key, self.counters.clone().into_bytes())?;
        self.hlog.clear();
        self.counters.clear();
        let mut shared = self.shared.lock().expect("upload state");
        shared.stats.batches += 1;
        shared.stats.intervals += self.pending;
        drop(shared);
        self.batch += 1;
        self.pending = 0;
        self.last = Some(Instant::now());
        Ok(())
    }

    fn put(&self, key: &str, bytes: Vec<u8>) -> Result<(), RemoteError> {
        let size = bytes.len() as u64;
        let t = Instant::now();
        self.remote.put(key, bytes)?;
        let took = t.elapsed().as_secs_f64();
        let mut shared = self.shared.lock().expect("upload state");
        let s = &mut shared.stats;
        s.puts += 1;
        s.bytes += size;
        s.put_seconds += took;
        s.max_put_seconds = s.max_put_seconds.max(took);
        Ok(())
    }
}
