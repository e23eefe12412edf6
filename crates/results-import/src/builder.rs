//! Requests read from a file become a run record, streamed: each request goes into the
//! interval (one second of wall-clock time) it ended in, and an interval is written once the
//! file has moved a few seconds past it. Files are written in roughly time order (k6 flushes
//! its samples every second or so), so a few seconds of intervals in memory are enough: a
//! 1 GB file needs no more memory than a short one. A request arriving after its interval was
//! written is counted in the oldest interval still open, and the run says how many did.

use crate::sample::{Request, StepKey};
pub use crate::seen::LoadSeen;
use crate::seen::{load_info, plan_hash};
use crate::slicing;
use crate::span::{self, Extent};
use crate::ReadError;
use loadlab_metrics::result::{LoadInfo, StopReason};
use loadlab_metrics::{Environment, ErrorKind, ImportedFrom, IntervalDelta, Phase, StepInfo};
use loadlab_record::{
    write_atomic, IntervalRecord, RecordEnd, RecordMeta, RecordSink, RecordWriter, META_FILE,
    RECORD_SCHEMA,
};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// One second: imported runs are sliced like native runs of 10 s or more, unless their
/// requests are too sparse for it (see `slicing`).
const SECOND_US: i64 = 1_000_000;
/// Intervals kept open behind the newest one before they are written.
pub const REORDER_WINDOW: i64 = 5;

/// Builds one run record in a directory from requests in (roughly) time order.
pub struct RecordBuilder {
    writer: RecordWriter,
    meta: RecordMeta,
    steps: HashMap<StepKey, usize>,
    /// The first request's start: the record's t = 0 is this, moved back by whole slices
    /// when earlier requests come before the first interval is written.
    t0_us: Option<i64>,
    pending: BTreeMap<i64, IntervalDelta>,
    /// The slice of the latest request's end.
    newest_request: Option<i64>,
    /// The next slice to be written (None: nothing written yet).
    next_key: Option<i64>,
    /// The run's start, µs since the epoch: the earliest request's start, t = 0 of the record.
    run_start_us: i64,
    last_end_us: i64,
    written: u32,
    /// Time covered by the intervals written.
    measured_us: i64,
    /// The slice length: one second until the data asks for longer (`decide_slice`).
    slice_us: i64,
    /// Whether the slice is chosen (then intervals may be written).
    sliced: bool,
    /// Once the slice is chosen: slices holding something, the slices between them, and the
    /// latest one holding something.
    busy: i64,
    empty: i64,
    latest_key: Option<i64>,
    /// Requests that came after their interval was written.
    pub late: u64,
    pub load: LoadSeen,
    /// The line being read, when the reader says (to name it in a refusal).
    line: Option<u64>,
    extent: Extent,
}

impl RecordBuilder {
    /// A builder writing into `dir` (created), for a run called `name` made by `source`.
    pub fn new(dir: &Path, name: &str, source: ImportedFrom) -> Self {
        let meta = RecordMeta {
            schema: RECORD_SCHEMA.to_string(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            name: name.to_string(),
            scenario_file: Some(source.file.clone()),
            target: None,
            start_unix_s: 0.0,
            warmup_s: 0.0,
            slice_s: SECOND_US as f64 / 1e6,
            load: LoadInfo::default(),
            plan_hash: plan_hash(name, &source),
            scenario: serde_json::json!({ "name": name, "imported": &source }),
            segment: None,
            steerable: false,
            steps: Vec::new(),
            origins: Vec::new(),
            data_sets: Vec::new(),
            thresholds: Vec::new(),
            environment: Environment::default(),
            threads: 0,
            cores: 0,
            cpus_allowed: Vec::new(),
            max_cpu_percent: 100.0,
            max_lag_ms: 0.0,
            host_timer: None,
            batch_window_ms: None,
            reads_at_wakeups: false,
            pid: 0,
            merged_from: None,
            clock: None,
            imported: Some(source),
        };
        Self {
            writer: RecordWriter::new(dir).without_sync(),
            meta,
            steps: HashMap::new(),
            t0_us: None,
            pending: BTreeMap::new(),
            newest_request: None,
            next_key: None,
            run_start_us: 0,
            last_end_us: i64::MIN,
            written: 0,
            measured_us: 0,
            slice_us: SECOND_US,
            sliced: false,
            busy: 0,
            empty: 0,
            latest_key: None,
            late: 0,
            load: LoadSeen::default(),
            line: None,
            extent: Extent::default(),
        }
    }

    /// Threshold expressions to judge the imported run by (`--threshold`).
    pub fn set_thresholds(&mut self, thresholds: Vec<String>) {
        self.meta.thresholds = thresholds;
    }

    /// The tool's version, learnt from the file.
    pub fn set_version(&mut self, version: String) {
        if let Some(i) = self.meta.imported.as_mut() {
            i.version = Some(version);
        }
    }

    /// Something the reader of the run must know about how it was imported.
    pub fn note(&mut self, note: String) {
        if let Some(i) = self.meta.imported.as_mut() {
            i.notes.push(note);
        }
    }

    /// How many lines could not be read (the run says so).
    pub fn set_malformed(&mut self, malformed: &crate::Malformed) {
        if let Some(i) = self.meta.imported.as_mut() {
            i.malformed = malformed.count;
        }
        if let Some(first) = malformed.first.first() {
            self.note(format!(
                "{} line(s) of the file could not be read and are not in the run (the first: line {}: {})",
                malformed.count, first.0, first.1
            ));
        }
    }

    /// The step of `key`, added on first sight.
    pub fn step(&mut self, key: &StepKey) -> usize {
        if let Some(&i) = self.steps.get(key) {
            return i;
        }
        let i = self.meta.steps.len();
        self.meta.steps.push(StepInfo {
            name: key.name.clone(),
            group: key.group.clone(),
            tags: key.tags.clone(),
            checks: Vec::new(),
        });
        self.steps.insert(key.clone(), i);
        i
    }

    /// The line of the file what comes next was read from.
    pub fn at_line(&mut self, line: u64) {
        self.line = Some(line);
    }

    /// The interval a moment (µs since the epoch) falls in; `None` once the file has moved
    /// on past it (it goes into the oldest open interval, counted as late). A moment an hour
    /// or more away from the others is refused (see `span`).
    /// Only a request moves the file on (`request`): the run ends with its last request, so
    /// what comes after it (a user's end, 30 s later) must not write that request's interval
    /// whole before the end is known.
    fn slot(
        &mut self,
        at_us: i64,
        start_us: i64,
        request: bool,
    ) -> Result<&mut IntervalDelta, ReadError> {
        let written = self.next_key.is_some();
        self.extent.take(at_us, start_us, self.line, written)?;
        let t0 = *self.t0_us.get_or_insert(start_us);
        let mut key = (at_us - t0).div_euclid(self.slice_us);
        if let Some(next) = self.next_key {
            if key < next {
                self.late += 1;
                key = next;
            }
        }
        if !self.sliced && self.ready_to_slice(key) {
            self.decide_slice();
            key = (at_us - t0).div_euclid(self.slice_us);
        }
        if self.sliced {
            self.check_empty(key, at_us)?;
        }
        if request {
            if self.sliced && self.newest_request.is_some_and(|newest| key > newest) {
                self.flush_before(key - REORDER_WINDOW)?;
            }
            self.newest_request = Some(self.newest_request.map_or(key, |n| n.max(key)));
        }
        Ok(self.pending.entry(key).or_default())
    }

    /// Adds one request of step `step`.
    pub fn request(&mut self, step: usize, r: &Request) -> Result<(), ReadError> {
        let start = r.end_us - r.duration_us as i64;
        if self.load.requests == 0 {
            self.load.first_start_us = start;
            self.load.last_start_us = start;
        }
        self.load.requests += 1;
        self.load.first_start_us = self.load.first_start_us.min(start);
        self.load.last_start_us = self.load.last_start_us.max(start);
        self.last_end_us = self.last_end_us.max(r.end_us);
        let delta = self.slot(r.end_us, start, true)?;
        if delta.steps.len() <= step {
            delta.steps.resize(step + 1, Default::default());
        }
        let s = &mut delta.steps[step];
        s.requests += 1;
        s.bytes_sent += r.bytes_sent;
        s.bytes_received += r.bytes_received;
        s.latency.record(r.duration_us);
        if r.status != 0 {
            s.add_status(r.status, 1);
            s.phases.record(&r.phases);
        }
        if let Some(kind) = r.error {
            s.failed += 1;
            s.errors[kind.index()] += 1;
        }
        Ok(())
    }

    /// Adds one phase duration of a request of `step` that ended at `end_us` (k6 reports
    /// each phase as its own point).
    pub fn phase(
        &mut self,
        step: usize,
        phase: Phase,
        end_us: i64,
        us: u64,
    ) -> Result<(), ReadError> {
        let delta = self.slot(end_us, end_us, false)?;
        if delta.steps.len() <= step {
            delta.steps.resize(step + 1, Default::default());
        }
        delta.steps[step].phases.get_mut(phase).record(us);
        Ok(())
    }

    /// An iteration that ended at `end_us`.
    pub fn iteration(&mut self, end_us: i64) -> Result<(), ReadError> {
        self.slot(end_us, end_us, false)?.iterations_completed += 1;
        Ok(())
    }

    /// How long an iteration that ended at `end_us` took.
    pub fn iteration_duration(&mut self, end_us: i64, us: u64) -> Result<(), ReadError> {
        self.slot(end_us, end_us - us as i64, false)?
            .iteration_duration
            .record(us);
        Ok(())
    }

    /// VUs (threads) active at `at_us`, as the file reported them.
    pub fn active(&mut self, at_us: i64, vus: u64) -> Result<(), ReadError> {
        self.load.vus.push((at_us, vus));
        let delta = self.slot(at_us, at_us, false)?;
        delta.active = vus;
        delta.active_max = delta.active_max.max(vus);
        Ok(())
    }

    /// A first example message of an error kind.
    pub fn error_example(
        &mut self,
        at_us: i64,
        kind: ErrorKind,
        message: &str,
    ) -> Result<(), ReadError> {
        let delta = self.slot(at_us, at_us, false)?;
        delta.note_error(kind, || message.to_string());
        Ok(())
    }

    /// The run ends with its last request's end: what the file says after it (a user's end)
    /// goes into that interval.
    fn fold_after_last_end(&mut self) {
        let t0 = self.t0_us.unwrap_or(0);
        let last = (self.last_end_us - t0)
            .div_euclid(self.slice_us)
            .max(self.next_key.unwrap_or(i64::MIN));
        let after: Vec<i64> = self.pending.range(last + 1..).map(|(&k, _)| k).collect();
        for k in after {
            if let Some(delta) = self.pending.remove(&k) {
                self.pending.entry(last).or_default().add(&delta);
            }
        }
    }

    /// Whether what is pending, with slice `key` to come, is enough to choose the slice:
    /// dense seconds (a load test, decided within seconds, as few intervals held as before)
    /// or many slices holding something (`slicing::ready`).
    fn ready_to_slice(&self, key: i64) -> bool {
        let Some((&first, _)) = self.pending.first_key_value() else {
            return false;
        };
        let last = self
            .pending
            .last_key_value()
            .map_or(key, |(&k, _)| k.max(key));
        slicing::ready(last - first + 1, self.pending.len())
    }

    /// Chooses the slice from what is pending (the first seconds of a dense file, the first
    /// `slicing::DECIDE_AFTER` slices holding something, or the whole file): pending
    /// one-second intervals are merged into longer ones when the file is too sparse for
    /// seconds.
    fn decide_slice(&mut self) {
        self.sliced = true;
        let (Some((&first, _)), Some((&last, _))) = (
            self.pending.first_key_value(),
            self.pending.last_key_value(),
        ) else {
            return;
        };
        self.busy = self.pending.len() as i64;
        self.empty = last - first + 1 - self.busy;
        self.latest_key = Some(last);
        let busy = self.pending.len();
        let slice_us = slicing::slice_for((last - first + 1) * SECOND_US, busy);
        if slice_us == SECOND_US {
            return;
        }
        let factor = slice_us / SECOND_US;
        let mut merged: BTreeMap<i64, IntervalDelta> = BTreeMap::new();
        for (key, delta) in std::mem::take(&mut self.pending) {
            slicing::merge_later(merged.entry(key.div_euclid(factor)).or_default(), &delta);
        }
        self.busy = merged.len() as i64;
        self.empty = (last.div_euclid(factor) - first.div_euclid(factor) + 1) - self.busy;
        self.latest_key = Some(last.div_euclid(factor));
        self.pending = merged;
        self.newest_request = self.newest_request.map(|k| k.div_euclid(factor));
        self.slice_us = slice_us;
        self.meta.slice_s = slice_us as f64 / 1e6;
        let span_h = (last - first + 1) as f64 / 3600.0;
        self.note(format!(
            "the file's requests are sparse ({} second(s) with something in {span_h:.1} h): the run is sliced in {} s intervals, not 1 s, so that it is not mostly empty seconds (totals and percentiles are exact)",
            busy,
            slice_us / SECOND_US
        ));
    }

    /// Writes the pending intervals before slice `key`.
    fn flush_before(&mut self, key: i64) -> Result<(), ReadError> {
        while let Some((&k, _)) = self.pending.first_key_value() {
            if k >= key {
                break;
            }
            let interval = self.pending.pop_first().expect("peeked").1;
            self.write(k, interval, None)?;
        }
        Ok(())
    }

    /// Counts slice `key` (of a moment at `at_us`) and the empty ones before it, when it is
    /// past the latest slice holding something, and refuses it when the run would be mostly
    /// empty slices (`slicing::over_budget`): it comes after too long a pause.
    fn check_empty(&mut self, key: i64, at_us: i64) -> Result<(), ReadError> {
        let Some(latest) = self.latest_key.filter(|&l| key > l) else {
            return Ok(());
        };
        let gap = key - latest - 1;
        if !slicing::over_budget(self.empty + gap, self.busy) {
            self.empty += gap;
            self.busy += 1;
            self.latest_key = Some(key);
            return Ok(());
        }
        let newest = latest;
        let t0 = self.t0_us.unwrap_or(0);
        let unit = self.slice_us / SECOND_US;
        Err(ReadError::Bad(format!(
            "{}a sample at {}, {:.1} h after the latest before it (by {}), with none between; the run so far has {} s holding samples and {} s without: it would be mostly empty {} s intervals. Is the file several runs one after another, or a stray timestamp? Split the file at the pause and import each part",
            self.line.map(|l| format!("line {l}: ")).unwrap_or_default(),
            span::rfc3339_ms(at_us),
            (gap * self.slice_us) as f64 / 3.6e9,
            span::rfc3339_ms(t0 + (newest + 1) * self.slice_us),
            self.busy * unit,
            self.empty * unit,
            unit,
        )))
    }

    /// Writes the interval of slice `key`; `end_us`: the run's end, for its last one.
    fn write(
        &mut self,
        key: i64,
        delta: IntervalDelta,
        end_us: Option<i64>,
    ) -> Result<(), ReadError> {
        if !self.sliced {
            self.decide_slice();
        }
        let next = match self.next_key {
            Some(n) => n,
            None => {
                let first = self.first_slice();
                if key < first {
                    // Before the first request was sent (a user started, threads counted):
                    // part of the run's first interval.
                    self.pending.entry(first).or_default().add(&delta);
                    return Ok(());
                }
                self.writer.begin(&self.meta)?;
                first
            }
        };
        // Seconds in which nothing ended are measured time too: written empty.
        for empty in next..key {
            self.emit(empty, IntervalDelta::default(), None)?;
        }
        let mut delta = delta;
        for step in &mut delta.steps {
            // The tools time one duration per request: it is both latency and service time.
            step.service = step.latency.clone();
        }
        self.emit(key, delta, end_us)?;
        self.next_key = Some(key + 1);
        Ok(())
    }

    /// Fixes the run's start at its earliest request's start (which may lie slices before
    /// the first end: JMeter and Gatling write a request when it ends, a long one late), to
    /// the µs; returns its slice.
    fn first_slice(&mut self) -> i64 {
        let t0 = self.t0_us.unwrap_or(0);
        let start = if self.load.requests > 0 {
            self.load.first_start_us
        } else {
            t0
        };
        self.run_start_us = start;
        self.meta.start_unix_s = start as f64 / 1e6;
        (start - t0).div_euclid(self.slice_us)
    }

    /// Writes slice `key`'s interval, cut to the run: from its start, to `end_us` if given.
    fn emit(&mut self, key: i64, delta: IntervalDelta, end_us: Option<i64>) -> std::io::Result<()> {
        let slice_start = self.t0_us.unwrap_or(0) + key * self.slice_us;
        let from = slice_start.max(self.run_start_us);
        let to = (slice_start + self.slice_us).min(end_us.unwrap_or(i64::MAX));
        let length_us = (to - from).max(1_000);
        let r = self.interval_record(from - self.run_start_us, delta, length_us);
        self.writer.interval(&r)?;
        self.measured_us += length_us;
        Ok(())
    }

    fn interval_record(
        &mut self,
        start_us: i64,
        mut delta: IntervalDelta,
        length_us: i64,
    ) -> IntervalRecord {
        if delta.steps.len() < self.meta.steps.len() {
            delta
                .steps
                .resize(self.meta.steps.len(), Default::default());
        }
        let index = self.written;
        self.written += 1;
        IntervalRecord {
            index,
            start_s: start_us as f64 / 1e6,
            length_s: length_us as f64 / 1e6,
            warmup: false,
            delta,
            resources: Vec::new(),
        }
    }

    /// Writes what remains, the header with every step and the load seen, and the end.
    /// Returns the number of intervals written (0: the file held no request).
    pub fn finish(mut self) -> Result<Finished, ReadError> {
        if self.load.requests == 0 {
            // Users or threads over time without a request are no run (a Gatling log of a
            // layout whose requests could not be read): nothing is written.
            return Ok(Finished {
                intervals: 0,
                late: self.late,
            });
        }
        if !self.sliced {
            // The whole file is pending: slice it before folding into the last interval.
            self.decide_slice();
        }
        self.fold_after_last_end();
        while let Some((k, interval)) = self.pending.pop_first() {
            let end = self.pending.is_empty().then_some(self.last_end_us);
            self.write(k, interval, end)?;
        }
        if self.written == 0 {
            return Ok(Finished {
                intervals: 0,
                late: self.late,
            });
        }
        let measured_s = self.measured_us as f64 / 1e6;
        self.meta.load = load_info(&self.load, self.meta.start_unix_s, measured_s);
        let text =
            serde_json::to_string_pretty(&self.meta).expect("a record header serializes") + "\n";
        write_atomic(&self.writer.dir().join(META_FILE), text.as_bytes())?;
        self.writer.end(&RecordEnd {
            stop: StopReason::Completed,
            signal: None,
            aborted_by_threshold: None,
            wall_s: measured_s,
            max_rss_bytes: 0,
            intervals: self.written,
            monitor_cpu_percent: None,
            host_timer: None,
            steering: Vec::new(),
            driven: None,
            data_use: Vec::new(),
        })?;
        Ok(Finished {
            intervals: self.written,
            late: self.late,
        })
    }
}

/// What the builder wrote.
#[derive(Debug, Clone, Copy)]
pub struct Finished {
    pub intervals: u32,
    pub late: u64,
}
