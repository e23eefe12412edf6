//! Reads a record back: its header, its end (if the run got that far) and its intervals, one
//! at a time so a three-hour record needs no more memory than one interval. A record cut off
//! mid-line (a killed process, a full disk) yields every interval before the cut.

use super::codec::{
    apply_hlog_entry, parse_counters_line, parse_hlog_line, start_ms, HlogEntry, IntervalRecord,
};
use super::meta::{RecordEnd, RecordMeta, RECORD_SCHEMA};
use super::{COUNTERS_FILE, END_FILE, HLOG_FILE, META_FILE};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{path}: no run record here (no {META_FILE})")]
    Missing { path: String },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

fn io_error(path: &Path, source: std::io::Error) -> RecordError {
    RecordError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// A record on disk, opened.
#[derive(Debug, Clone)]
pub struct StoredRecord {
    pub dir: PathBuf,
    pub meta: RecordMeta,
    /// `None`: the process died before the run ended.
    pub end: Option<RecordEnd>,
}

/// True when `dir` holds a record.
pub fn is_record(dir: &Path) -> bool {
    dir.join(META_FILE).is_file()
}

impl StoredRecord {
    pub fn open(dir: &Path) -> Result<StoredRecord, RecordError> {
        let meta_path = dir.join(META_FILE);
        let text = match std::fs::read_to_string(&meta_path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(RecordError::Missing {
                    path: dir.display().to_string(),
                })
            }
            Err(e) => return Err(io_error(&meta_path, e)),
        };
        let meta: RecordMeta = serde_json::from_str(&text).map_err(|e| RecordError::Invalid {
            path: meta_path.display().to_string(),
            message: format!("not a loadlab run record: {e}"),
        })?;
        if meta.schema != RECORD_SCHEMA {
            return Err(RecordError::Invalid {
                path: meta_path.display().to_string(),
                message: format!(
                    "record schema `{}` is not {RECORD_SCHEMA} (written by loadlab {})",
                    meta.schema, meta.tool_version
                ),
            });
        }
        let end_path = dir.join(END_FILE);
        let end = std::fs::read_to_string(&end_path)
            .ok()
            .and_then(|t| serde_json::from_str::<RecordEnd>(&t).ok());
        Ok(StoredRecord {
            dir: dir.to_path_buf(),
            meta,
            end,
        })
    }

    /// The intervals, in order, each with its histograms.
    pub fn intervals(&self) -> Result<Intervals, RecordError> {
        let counters_path = self.dir.join(COUNTERS_FILE);
        let counters = File::open(&counters_path).map_err(|e| io_error(&counters_path, e))?;
        let hlog = File::open(self.dir.join(HLOG_FILE))
            .ok()
            .map(BufReader::new);
        Ok(Intervals {
            counters: BufReader::new(counters),
            hlog,
            pending: None,
            line: String::new(),
            done: false,
            steps: self.meta.steps.len(),
        })
    }
}

/// Iterator over a record's complete intervals.
pub struct Intervals {
    counters: BufReader<File>,
    hlog: Option<BufReader<File>>,
    /// A histogram line read ahead that belongs to a later interval.
    pending: Option<HlogEntry>,
    line: String,
    done: bool,
    steps: usize,
}

impl Intervals {
    fn next_hlog_entry(&mut self) -> Option<HlogEntry> {
        if let Some(e) = self.pending.take() {
            return Some(e);
        }
        let hlog = self.hlog.as_mut()?;
        let mut line = String::new();
        loop {
            line.clear();
            match hlog.read_line(&mut line) {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            if !line.ends_with('\n') {
                return None; // cut off mid-line
            }
            if let Some(e) = parse_hlog_line(line.trim_end()) {
                return Some(e);
            }
        }
    }
}

impl Iterator for Intervals {
    type Item = IntervalRecord;

    fn next(&mut self) -> Option<IntervalRecord> {
        if self.done {
            return None;
        }
        self.line.clear();
        let complete = matches!(self.counters.read_line(&mut self.line), Ok(n) if n > 0)
            && self.line.ends_with('\n');
        let parsed = complete
            .then(|| parse_counters_line(self.line.trim_end()))
            .flatten();
        let Some(mut record) = parsed else {
            self.done = true;
            return None;
        };
        if record.delta.steps.len() < self.steps {
            record
                .delta
                .steps
                .resize(self.steps, loadlab_metrics::StepDelta::default());
        }
        let at = start_ms(&record);
        while let Some(entry) = self.next_hlog_entry() {
            if entry.start_ms > at {
                self.pending = Some(entry);
                break;
            }
            if entry.start_ms == at && !apply_hlog_entry(&mut record.delta, &entry) {
                self.done = true;
                return None;
            }
        }
        Some(record)
    }
}
