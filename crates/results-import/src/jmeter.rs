//! What JMeter's two result formats share (the readers are `jmeter_csv` and `jmeter_xml`): a
//! sample to a request, its step the label, its group the thread group (`threadName` without
//! the thread's numbers); a Transaction Controller's own sample left out; and the file read
//! twice, since JMeter appends each test run to an existing results file: the first pass
//! finds the runs (a pause of 10 minutes without a sample), the second imports the newest.

use crate::builder::RecordBuilder;
use crate::problems::Malformed;
use crate::sample::{status_error, Request, StepKey};
use crate::ReadError;
use loadlab_metrics::{ErrorKind, LoadModel, Phases};
use std::collections::HashMap;
use std::io::BufRead;

/// `Thread Group 1-3` → `Thread Group`.
pub(crate) fn thread_group(thread: &str) -> &str {
    match thread.rsplit_once(' ') {
        Some((group, n)) if n.chars().all(|c| c.is_ascii_digit() || c == '-') => group,
        _ => thread,
    }
}

/// A failed sample's kind, from its status, else from what JMeter wrote of the exception
/// (in the code, `Non HTTP response code: java.net.UnknownHostException`, or the message).
fn error_kind(code: u16, code_text: &str, message: &str) -> ErrorKind {
    if let Some(k) = status_error(code) {
        return k;
    }
    let m = format!("{code_text} {message}").to_ascii_lowercase();
    if m.contains("connection refused") || m.contains("connectexception") {
        ErrorKind::ConnectRefused
    } else if m.contains("timed out") || m.contains("timeout") {
        ErrorKind::Timeout
    } else if m.contains("reset") || m.contains("nohttpresponse") {
        ErrorKind::Reset
    } else if m.contains("unknownhost") || m.contains("name or service not known") {
        ErrorKind::Dns
    } else if m.contains("ssl") {
        ErrorKind::Tls
    } else if code != 0 {
        ErrorKind::CheckFailed
    } else {
        ErrorKind::Io
    }
}

/// One JMeter sample, from a CSV row or an XML element's attributes.
pub(crate) struct Sample<'a> {
    /// Its line in the file (the row, or the element's start tag).
    pub line: u64,
    /// ms since the epoch, the sample's start.
    pub start_ms: i64,
    pub elapsed_ms: i64,
    pub label: &'a str,
    /// `threadName` (empty when the file has none).
    pub thread: &'a str,
    /// The step's group: the thread group, or the transaction the sample was part of.
    pub group: &'a str,
    pub code: &'a str,
    pub success: bool,
    /// Why it failed (an assertion's message), else the response message.
    pub message: &'a str,
    pub latency_ms: Option<i64>,
    pub connect_ms: Option<i64>,
    pub bytes: Option<i64>,
    pub sent_bytes: Option<i64>,
    pub all_threads: Option<i64>,
}

/// A Transaction Controller's own sample: its time is its samplers' (each counted on its own),
/// so it is no request when they are in the file (see `Samples::transaction`).
pub(crate) fn is_transaction(message: &str) -> bool {
    message.starts_with("Number of samples in transaction")
}

/// Where a reader puts each sample it reads.
pub(crate) trait Sink {
    /// Each sample's start as the file lists it, in file order, before the CSV reader holds a
    /// row for its sub-results: where a test run begins is a matter of file order.
    fn row(&mut self, _line: u64, _start_ms: i64) {}
    fn sample(&mut self, s: &Sample) -> Result<(), ReadError>;
}

/// What a reader saw besides the samples, for the import's notes.
#[derive(Debug, Default, Clone)]
pub(crate) struct Readings {
    /// Samples whose start was a date without a time zone.
    pub zoneless_dates: u64,
    /// Samples that held samples of their own (XML).
    pub holders: u64,
    /// The line an XML file ends on without closing `<testResults>` (cut between samples).
    pub unclosed: Option<u64>,
    /// The first element directly in `<testResults>` that is no sample (XML): its line, name.
    pub unknown: Option<(u64, String)>,
}

/// A reader of one of JMeter's formats.
pub(crate) type Reader<R> = fn(R, &mut Malformed, &mut dyn Sink) -> Result<Readings, ReadError>;

/// A pause this long without a sample starts another test run: JMeter appends each run to
/// an existing results file.
const NEW_RUN_AFTER_MS: i64 = 10 * 60 * 1000;

/// The test runs one file holds, found by a first pass over the rows in file order: where
/// each begins, by line.
#[derive(Debug, Default)]
pub(crate) struct Runs {
    latest_ms: Option<i64>,
    /// (its first line, its first sample's start in ms, the pause before it in ms).
    starts: Vec<(u64, i64, i64)>,
}

impl Sink for Runs {
    fn row(&mut self, line: u64, start_ms: i64) {
        // Back into the pause: the sample after it was a stray timestamp inside the run, not
        // another run (the import then refuses it by its line).
        if let Some(&(_, first_ms, _)) = self.starts.last() {
            if start_ms < first_ms - NEW_RUN_AFTER_MS {
                self.starts.pop();
            }
        }
        if let Some(latest) = self.latest_ms {
            if start_ms - latest > NEW_RUN_AFTER_MS {
                self.starts.push((line, start_ms, start_ms - latest));
            }
        }
        self.latest_ms = Some(self.latest_ms.map_or(start_ms, |l| l.max(start_ms)));
    }

    fn sample(&mut self, _: &Sample) -> Result<(), ReadError> {
        Ok(())
    }
}

/// Reads the file twice with `read`: first to find the test runs it holds, then to put the
/// newest one's samples into `builder`.
pub(crate) fn import_newest_run<R: BufRead>(
    read: Reader<R>,
    mut open: impl FnMut() -> Result<R, ReadError>,
    builder: &mut RecordBuilder,
    malformed: &mut Malformed,
) -> Result<(), ReadError> {
    builder.load.model = LoadModel::Closed;
    let mut runs = Runs::default();
    read(open()?, &mut Malformed::default(), &mut runs)?;
    let newest = runs.starts.last().copied();
    let mut samples = Samples {
        builder,
        from_line: newest.map_or(0, |(line, _, _)| line),
        skipped: 0,
        key: String::new(),
        steps: HashMap::new(),
        last_threads: None,
        transactions: 0,
        lone_transactions: 0,
        thread_latest: HashMap::new(),
        zero_phases: 0,
    };
    let readings = read(open()?, malformed, &mut samples)?;
    if let (0, Some((line, name))) = (samples.builder.load.requests, &readings.unknown) {
        return Err(ReadError::Bad(format!(
            "line {line}: <{name}> is no sample loadlab reads (<httpSample>, <sample>, or an element with JMeter's `lb` and `ts` attributes), and the file holds none: a plugin's result class written by XStream? Save the results as CSV (jmeter.save.saveservice.output_format=csv) and import them as jmeter-csv"
        )));
    }
    let counts = (
        samples.transactions,
        samples.lone_transactions,
        samples.zero_phases,
    );
    let skipped = samples.skipped;
    notes(builder, readings, counts, &runs, skipped);
    Ok(())
}

/// Says what was left out, and what was read by assumption.
fn notes(
    builder: &mut RecordBuilder,
    readings: Readings,
    (transactions, lone, zero_phases): (u64, u64, u64),
    runs: &Runs,
    skipped: u64,
) {
    if let Some(&(line, start_ms, pause_ms)) = runs.starts.last() {
        builder.note(format!(
            "the file holds {} test runs, one after another (JMeter appends each run to an existing results file): the newest, from line {line} ({}) after {:.1} h without a sample, was imported; the {skipped} sample(s) before it were left out",
            runs.starts.len() + 1,
            rfc3339_ms(start_ms),
            pause_ms as f64 / 3_600_000.0,
        ));
    }
    if readings.holders > 0 {
        builder.note(format!(
            "{} sample(s) held samples of their own (a Transaction Controller's parent sample, a page with its redirects or resources): the samples inside are the requests, grouped under the outer one's label",
            readings.holders
        ));
    }
    if transactions > 0 {
        builder.note(format!(
            "{transactions} Transaction Controller sample(s) are not requests: the requests they timed are counted one by one"
        ));
    }
    if lone > 0 {
        builder.note(format!(
            "{lone} Transaction Controller sample(s) timed samplers that are not in the file (saved without sub-results, jmeter.save.saveservice.subresults=false, or only the parent sample): each is counted as one request, with the transaction's time and outcome"
        ));
    }
    if zero_phases > 0 {
        builder.note(format!(
            "{zero_phases} request(s) had a waiting or receiving time of 0 ms (JMeter times in whole ms: under 1 ms), kept as 1 µs, the histograms' floor"
        ));
    }
    if let Some(line) = readings.unclosed {
        builder.note(format!(
            "the file ends at line {line} without </testResults>: JMeter was still writing it, or was stopped; the samples up to there are imported, any it wrote later are not"
        ));
    }
    if readings.zoneless_dates > 0 {
        builder.note(format!(
            "{} sample(s) started at a date without a time zone (jmeter.save.saveservice.timestamp_format): read as UTC, so the run's start may be off by the JMeter host's offset from UTC; times within the run are as written (durations are exact)",
            readings.zoneless_dates
        ));
    }
}

fn rfc3339_ms(ms: i64) -> String {
    loadlab_metrics::result::rfc3339(
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms.max(0) as u64),
    )
}

/// The samples of the run being imported going into the record: steps by (label, group),
/// the active threads over time, and the transactions left out.
struct Samples<'b> {
    builder: &'b mut RecordBuilder,
    /// Where the newest test run begins: samples on earlier lines are of earlier runs.
    from_line: u64,
    /// Samples of earlier test runs left out.
    skipped: u64,
    /// `label`, NUL, `group`: the key of `steps`, built in place (no allocation per sample).
    key: String,
    steps: HashMap<String, usize>,
    last_threads: Option<u64>,
    /// Transaction Controller samples left out: their samplers are requests of the file.
    transactions: u64,
    /// Transaction Controller samples counted as requests: their samplers are not in the file.
    lone_transactions: u64,
    /// Each thread's latest start of a sample that is no transaction's (ms).
    thread_latest: HashMap<String, i64>,
    /// Requests with a waiting or receiving time of 0 ms.
    zero_phases: u64,
}

impl Samples<'_> {
    /// Whether a Transaction Controller's sample is left out: its samplers came before it, in
    /// its thread, from its start on (a thread runs one sample at a time). When none did, the
    /// file lacks them and the transaction is all there is of them: it counts as a request.
    fn transaction(&mut self, s: &Sample) -> bool {
        let timed = self
            .thread_latest
            .get(s.thread)
            .is_some_and(|&latest| latest >= s.start_ms);
        if timed {
            self.transactions += 1;
        } else {
            self.lone_transactions += 1;
        }
        timed
    }

    /// Notes a sample that is no transaction's: the latest of its thread.
    fn sampler(&mut self, s: &Sample) {
        match self.thread_latest.get_mut(s.thread) {
            Some(latest) => *latest = (*latest).max(s.start_ms),
            None => {
                self.thread_latest.insert(s.thread.to_string(), s.start_ms);
            }
        }
    }
}

impl Sink for Samples<'_> {
    fn sample(&mut self, s: &Sample) -> Result<(), ReadError> {
        if s.line < self.from_line {
            self.skipped += 1;
            return Ok(());
        }
        if is_transaction(s.message) {
            if self.transaction(s) {
                return Ok(());
            }
        } else {
            self.sampler(s);
        }
        let builder = &mut *self.builder;
        builder.at_line(s.line);
        self.key.clear();
        self.key.extend([s.label, "\0", s.group]);
        let step = match self.steps.get(self.key.as_str()) {
            Some(&i) => i,
            None => {
                let i = builder.step(&StepKey {
                    name: s.label.to_string(),
                    group: (!s.group.is_empty()).then(|| s.group.to_string()),
                    tags: Vec::new(),
                });
                self.steps.insert(self.key.clone(), i);
                i
            }
        };
        let status: u16 = s.code.parse().unwrap_or(0);
        let ms_to_us = |ms: Option<i64>| ms.map(|ms| ms.max(0) as u64 * 1000);
        let (latency, connect) = (ms_to_us(s.latency_ms), ms_to_us(s.connect_ms));
        let elapsed_us = s.elapsed_ms.max(0) as u64 * 1000;
        let end_us = (s.start_ms + s.elapsed_ms.max(0)) * 1000;
        let request = Request {
            end_us,
            duration_us: elapsed_us,
            status,
            error: (!s.success).then(|| error_kind(status, s.code, s.message)),
            bytes_sent: s.sent_bytes.unwrap_or(0).max(0) as u64,
            bytes_received: s.bytes.unwrap_or(0).max(0) as u64,
            phases: Phases {
                connect_us: connect.filter(|&c| c > 0),
                tls_us: None,
                // JMeter's Latency runs from the send to the first byte, connect included.
                waiting_us: latency.map(|l| l.saturating_sub(connect.unwrap_or(0))),
                receiving_us: latency.map(|l| elapsed_us.saturating_sub(l)),
            },
        };
        let phases = [request.phases.waiting_us, request.phases.receiving_us];
        if status != 0 && phases.contains(&Some(0)) {
            self.zero_phases += 1;
        }
        // The request first: the run's time grid starts at the first one's start.
        builder.request(step, &request)?;
        if let (Some(kind), false) = (request.error, s.message.is_empty()) {
            builder.error_example(end_us, kind, s.message)?;
        }
        if let Some(threads) = s.all_threads.map(|t| t.max(0) as u64) {
            if self.last_threads != Some(threads) {
                builder.active(end_us, threads)?;
                self.last_threads = Some(threads);
            }
        }
        Ok(())
    }
}
