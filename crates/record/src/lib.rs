//! The run record: the interval files a run writes, read back, merged across segments,
//! summarised and judged into the run's result; the recorder (metrics) knows nothing of files.
//!
//! It is the source of truth of a run: per interval (1 s), per request step, HDR
//! histograms (latency, service time, send lag, server latency, and the request phases:
//! connect, TLS handshake, waiting, receiving), the iteration durations, and counters
//! (requests, statuses, error kinds, checks, bytes, iterations, dropped, active and the most
//! VUs active at once, generator CPU), the resource samples of the monitor, plus the resolved
//! scenario and plan. It is appended and flushed to disk while the run goes, so a signal, a
//! crash or a full disk never loses a completed interval; the summary (`run.json`) is derived
//! from it by one function ([`Summarizer`]); segments of one plan merge exactly.
//!
//! On disk (one directory per run):
//!
//! ```text
//! record.json     RecordMeta: the resolved scenario, plan, steps, segment, host
//! intervals.hlog  HdrHistogram interval log, one tagged line per step series per interval
//! counters.jsonl  one JSON line of counters per interval, written after its histograms
//! end.json        RecordEnd: how the run ended (absent: the process died)
//! ```
//!
//! Why two files: the histograms stay in the standard HdrHistogram interval-log format, so
//! HdrHistogram's own tools (HistogramLogAnalyzer, `hdrhistogram` readers) open them as they
//! are; counters are not histograms, and JSON Lines keeps them readable with `jq`. A complete
//! counters line is the commit mark of its interval.
//!
//! Resources: a counters line's `res` holds the monitor's samples that ended in its interval
//! (usually one; absent when nothing is monitored), each as the monitor took it
//! (`elapsed_ms`: its end since the plan's t = 0; `interval_ms`; `values` by series name;
//! `top_processes`; `missing`; `warnings` first seen then). A merged record keeps every
//! segment's samples apart, tagged `seg: <index>`, in segment order (the segments' hosts
//! differ, so nothing is added up), which keeps merges exact and deterministic. The monitor's
//! own CPU is in `end.json` (`monitor_cpu_percent`). The summary judges the samples of the
//! steady window (host contended, target CPU-bound, memory growth, files and ports) per
//! segment, so the end of a run, a crash recovery and a merge give the same verdicts.

mod codec;
mod contended_words;
pub mod disturbance;
mod judge;
pub mod live;
mod merge;
mod meta;
mod reader;
mod summary;
mod writer;

pub use codec::{
    counters_line, hlog_header, hlog_lines, parse_counters_line, IntervalLines, IntervalRecord,
    RecordedSample,
};
pub use judge::MAX_UNDELIVERED;
pub use live::{LiveControl, LiveObserver};
pub use merge::{merge_records, MergeError};
pub use meta::{DataSetInfo, MergedSegment, OriginInfo, RecordEnd, RecordMeta, RECORD_SCHEMA};
pub use reader::{is_record, Intervals, RecordError, StoredRecord};
pub use summary::Summarizer;
pub use writer::{write_atomic, Guarded, RecordSink, RecordWriter};

pub const META_FILE: &str = "record.json";
pub const HLOG_FILE: &str = "intervals.hlog";
pub const COUNTERS_FILE: &str = "counters.jsonl";
pub const END_FILE: &str = "end.json";

/// Reads a whole record and derives its summary (a dead run's record, or any record again).
pub fn summarize(record: &StoredRecord) -> Result<loadlab_metrics::RunResult, RecordError> {
    let mut s = Summarizer::for_record(&record.meta);
    for interval in record.intervals()? {
        s.add(&interval);
    }
    Ok(s.finish(&record.meta, record.end.as_ref()))
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod writer_tests;
