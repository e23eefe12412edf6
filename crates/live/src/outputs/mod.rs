//! Live outputs (`--out KIND=DEST`, `outputs:`): each interval of every run is also written to
//! a file (`json`, `csv`) or sent to a metrics backend (`prometheus-rw`, `otlp`) while the run
//! goes. Each output is a [`LiveTap`] whose runs hand their intervals to a sender thread
//! ([`worker`]): a slow or down receiver costs the load nothing and the local record nothing;
//! what could not be sent is counted and said in the summary ([`OutputReport`]).

pub mod csv;
pub mod http;
mod json;
mod otlp;
pub mod otlp_proto;
mod prometheus;
pub mod prometheus_proto;
pub mod rows;
pub mod snapshot;
pub mod worker;

use crate::tap::LiveTap;
use loadlab_analysis::thresholds::ThresholdWatch;
use loadlab_record::{
    IntervalRecord, LiveControl, LiveObserver, RecordEnd, RecordMeta, Summarizer,
};
use loadlab_scenario::{OutputKind, OutputSpec};
use serde::{Deserialize, Serialize};
use snapshot::{Snapshot, SnapshotBuilder};
use std::fmt;
use std::sync::{Arc, Mutex};
use worker::{SharedCounts, SharedSink, Worker};

pub use otlp::encode as encode_otlp;
pub use prometheus::{compress as snappy, encode as encode_prometheus};

/// Why an output could not be opened (bad input: exit 2).
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("--out {spec}: cannot create `{dest}`: {source}")]
    File {
        spec: String,
        dest: String,
        source: std::io::Error,
    },
}

/// Why one interval could not be delivered.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Http(String),
    #[error("receiver answered {status}: {body}")]
    Status { status: u16, body: String },
    #[error("an earlier send panicked")]
    Poisoned,
}

/// Writes or sends one interval (called on the output's own thread).
pub(crate) trait Sink: Send {
    fn send(&mut self, snapshot: &Snapshot) -> Result<(), SendError>;
}

/// What every output of a command is told besides its destination.
#[derive(Debug, Clone, Default)]
pub struct OutputOptions {
    /// The `testid` of every run (the `testid` label of `--label`); else each run's scenario
    /// name and start time.
    pub testid: Option<String>,
}

/// What an output did, for the summary and the result file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputReport {
    pub kind: String,
    pub dest: String,
    pub sent: u64,
    pub dropped: u64,
    pub failed: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl fmt::Display for OutputReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "output {} ({}): {} intervals sent",
            self.kind, self.dest, self.sent
        )?;
        if self.dropped > 0 {
            write!(f, ", {} dropped", self.dropped)?;
        }
        if self.failed > 0 {
            write!(f, ", {} failed", self.failed)?;
        }
        if let Some(e) = &self.error {
            write!(f, " (last error: {e})")?;
        }
        Ok(())
    }
}

/// One output for the whole command; one sender thread per run.
pub struct OutputTap {
    spec: OutputSpec,
    sink: SharedSink,
    counts: SharedCounts,
    testid: Option<String>,
}

impl OutputTap {
    /// Opens the output (creates its file, or prepares its HTTP client).
    pub fn open(spec: &OutputSpec, options: &OutputOptions) -> Result<Self, OutputError> {
        let file_err = |source| OutputError::File {
            spec: spec.to_string(),
            dest: spec.dest.clone(),
            source,
        };
        let sink: Box<dyn Sink> = match spec.kind {
            OutputKind::Json => Box::new(json::JsonSink::create(&spec.dest).map_err(file_err)?),
            OutputKind::Csv => Box::new(csv::CsvSink::create(&spec.dest).map_err(file_err)?),
            OutputKind::PrometheusRw => Box::new(prometheus::PrometheusSink::new(&spec.dest)),
            OutputKind::Otlp => Box::new(otlp::OtlpSink::new(&spec.dest)),
        };
        Ok(Self {
            spec: spec.clone(),
            sink: Arc::new(Mutex::new(sink)),
            counts: Arc::default(),
            testid: options.testid.clone(),
        })
    }

    /// What it did so far (every run of the command).
    pub fn report(&self) -> OutputReport {
        let c = self.counts.lock().map(|c| c.clone()).unwrap_or_default();
        OutputReport {
            kind: self.spec.kind.to_string(),
            dest: self.spec.dest.clone(),
            sent: c.sent,
            dropped: c.dropped,
            failed: c.failed,
            error: c.error,
        }
    }
}

impl LiveTap for OutputTap {
    fn observer(&self, _thresholds: &ThresholdWatch) -> Box<dyn LiveObserver> {
        Box::new(OutputObserver {
            sink: self.sink.clone(),
            counts: self.counts.clone(),
            testid: self.testid.clone(),
            run: None,
        })
    }
}

/// Opens every output; the first that cannot be opened is the error.
pub fn open_all(
    specs: &[OutputSpec],
    options: &OutputOptions,
) -> Result<Vec<Arc<OutputTap>>, OutputError> {
    specs
        .iter()
        .map(|s| OutputTap::open(s, options).map(Arc::new))
        .collect()
}

struct OutputObserver {
    sink: SharedSink,
    counts: SharedCounts,
    testid: Option<String>,
    run: Option<(SnapshotBuilder, Worker)>,
}

impl LiveObserver for OutputObserver {
    fn begin(&mut self, meta: &RecordMeta) {
        let builder = SnapshotBuilder::new(meta, self.testid.as_deref());
        let worker = Worker::start(self.sink.clone(), self.counts.clone());
        self.run = Some((builder, worker));
    }

    fn interval(&mut self, record: &IntervalRecord, _summary: &Summarizer) -> LiveControl {
        if let Some((builder, worker)) = &mut self.run {
            worker.push(builder.snapshot(record));
        }
        LiveControl::Continue
    }

    fn end(&mut self, _end: &RecordEnd) {
        if let Some((_, mut worker)) = self.run.take() {
            worker.finish();
        }
    }
}
