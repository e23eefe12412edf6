//! Streams a record to a directory while the run goes: `record.json` at the start, each
//! interval appended as it completes (and put on the device at most once a second),
//! `end.json` at the end.
//!
//! A write that fails (a full disk, a directory removed) stops the writing, never the run:
//! the error is kept for the caller to report, and no file is left that looks like a result
//! (the JSON files are written to a temporary name and renamed).

use super::codec::{hlog_header, IntervalLines, IntervalRecord};
use super::meta::{RecordEnd, RecordMeta};
use super::{COUNTERS_FILE, END_FILE, HLOG_FILE, META_FILE};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where a run's record goes as it is made (a directory here; object storage elsewhere).
pub trait RecordSink: Send {
    fn begin(&mut self, meta: &RecordMeta) -> std::io::Result<()>;
    fn interval(&mut self, interval: &IntervalRecord) -> std::io::Result<()>;
    fn end(&mut self, end: &RecordEnd) -> std::io::Result<()>;
}

/// A record in a directory.
pub struct RecordWriter {
    dir: PathBuf,
    hlog: Option<File>,
    counters: Option<File>,
    lines: IntervalLines,
    /// When the appended intervals go to the device (what survives a power cut); tests may
    /// skip it.
    sync: Option<DeviceSync>,
}

/// How often appended intervals are put on the device. Every interval is written to the file
/// at once, so a killed process loses nothing; only a power cut or a kernel crash loses what
/// was not yet synced, at most this long. Syncing each 100 ms interval of a short run cost
/// two `fdatasync`s per interval: 5% of a 5,000 requests/s run's CPU, and a disk write.
pub const SYNC_EVERY: Duration = Duration::from_secs(1);

/// The device syncs of a writer: when the last one was, and whether anything was appended
/// since.
#[derive(Debug, Default)]
struct DeviceSync {
    last: Option<Instant>,
    unsynced: bool,
    count: u64,
}

impl DeviceSync {
    fn due(&self, now: Instant) -> bool {
        self.last
            .is_none_or(|last| now.saturating_duration_since(last) >= SYNC_EVERY)
    }
}

impl RecordWriter {
    /// A writer into `dir` (created if needed; nothing is written until `begin`).
    pub fn new(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
            hlog: None,
            counters: None,
            lines: IntervalLines::default(),
            sync: Some(DeviceSync::default()),
        }
    }

    pub fn without_sync(mut self) -> Self {
        self.sync = None;
        self
    }

    /// How many times the appended intervals were put on the device.
    pub fn device_syncs(&self) -> u64 {
        self.sync.as_ref().map_or(0, |s| s.count)
    }

    /// Puts both interval files on the device when `force`d or a sync is due.
    fn sync_files(&mut self, force: bool) -> std::io::Result<()> {
        let Some(sync) = self.sync.as_mut() else {
            return Ok(());
        };
        let now = Instant::now();
        if !sync.unsynced || !(force || sync.due(now)) {
            return Ok(());
        }
        for f in [&self.hlog, &self.counters].into_iter().flatten() {
            f.sync_data()?;
        }
        sync.last = Some(now);
        sync.unsynced = false;
        sync.count += 1;
        Ok(())
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn append(file: &mut Option<File>, bytes: &[u8]) -> std::io::Result<()> {
        let f = file
            .as_mut()
            .ok_or_else(|| std::io::Error::other("the record was not begun"))?;
        f.write_all(bytes)?;
        f.flush()
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename; the temporary file is
/// removed when anything fails, so a failed write leaves nothing behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_data()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

impl RecordSink for RecordWriter {
    fn begin(&mut self, meta: &RecordMeta) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let text = serde_json::to_string_pretty(meta).expect("a record header serializes") + "\n";
        write_atomic(&self.dir.join(META_FILE), text.as_bytes())?;
        let mut hlog = File::create(self.dir.join(HLOG_FILE))?;
        hlog.write_all(hlog_header(meta.start_unix_s, &meta.legend()).as_bytes())?;
        self.hlog = Some(hlog);
        self.counters = Some(File::create(self.dir.join(COUNTERS_FILE))?);
        Ok(())
    }

    fn interval(&mut self, interval: &IntervalRecord) -> std::io::Result<()> {
        let (hlog, counters) = self.lines.of(interval);
        Self::append(&mut self.hlog, hlog.as_bytes())?;
        Self::append(&mut self.counters, counters.as_bytes())?;
        if let Some(sync) = self.sync.as_mut() {
            sync.unsynced = true;
        }
        self.sync_files(false)
    }

    fn end(&mut self, end: &RecordEnd) -> std::io::Result<()> {
        self.sync_files(true)?;
        let text = serde_json::to_string_pretty(end).expect("a record end serializes") + "\n";
        write_atomic(&self.dir.join(END_FILE), text.as_bytes())
    }
}

/// Wraps a sink so that its first failure is kept and later calls do nothing: the run goes
/// on in memory, and the caller names the failure at the end.
pub struct Guarded {
    sink: Box<dyn RecordSink>,
    error: Option<std::io::Error>,
}

impl Guarded {
    pub fn new(sink: Box<dyn RecordSink>) -> Self {
        Self { sink, error: None }
    }

    pub fn error(&self) -> Option<&std::io::Error> {
        self.error.as_ref()
    }

    pub fn take_error(&mut self) -> Option<std::io::Error> {
        self.error.take()
    }

    fn guard(&mut self, f: impl FnOnce(&mut dyn RecordSink) -> std::io::Result<()>) {
        if self.error.is_none() {
            if let Err(e) = f(self.sink.as_mut()) {
                self.error = Some(e);
            }
        }
    }

    pub fn begin(&mut self, meta: &RecordMeta) {
        self.guard(|s| s.begin(meta));
    }

    pub fn interval(&mut self, interval: &IntervalRecord) {
        self.guard(|s| s.interval(interval));
    }

    pub fn end(&mut self, end: &RecordEnd) {
        self.guard(|s| s.end(end));
    }
}
