//! The run store: every run, study and capacity search is kept under one directory
//! (default `./loadlab-results/`, `LOADLAB_RESULTS` or `--results DIR` to change):
//!
//! ```text
//! loadlab-results/
//!   loadlab.db                 SQLite index of runs and studies (crate rusqlite, bundled SQLite)
//!   runs/<id>/run.json         the run result (schema loadlab.run.v1)
//!   runs/<id>/latency.hlog     its histograms in the HdrHistogram interval log format
//!   studies/<id>/study.json    a study (schema loadlab.study.v1)
//!   capacity/<id>/capacity.json
//! ```
//!
//! A run is indexed as `running` when it starts (with the process id) and completed when it
//! ends: a run whose process died is shown `interrupted` on the next open, so a crash never
//! leaves the store inconsistent. Files are written to a temporary name and renamed.

use loadlab_metrics::RunResult;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Environment variable naming the results directory.
pub const RESULTS_ENV: &str = "LOADLAB_RESULTS";
/// Default results directory (relative to the working directory).
pub const DEFAULT_DIR: &str = "loadlab-results";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("run store {dir}: {message}")]
    Io { dir: String, message: String },
    #[error("run store database: {0}")]
    Db(#[from] rusqlite::Error),
    #[error("{0}")]
    NotFound(String),
}

/// A row of the run index.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunRecord {
    pub id: String,
    pub started_at: String,
    pub scenario: String,
    pub scenario_file: Option<String>,
    pub variant: Option<String>,
    /// Study or capacity search the run belongs to.
    pub study: Option<String>,
    /// `running`, `done`, `interrupted` or `failed`.
    pub status: String,
    /// Offered load as text (`20 vus`, `200/s`).
    pub load: Option<String>,
    /// Achieved throughput (req/s).
    pub rate: Option<f64>,
    pub p95_ms: Option<f64>,
    /// Failed / total requests.
    pub error_rate: Option<f64>,
    pub valid: Option<bool>,
    /// Every threshold passed.
    pub passed: Option<bool>,
    /// `run.json`, when the run completed.
    pub path: Option<PathBuf>,
}

/// A row of the study index (studies and capacity searches).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StudyRecord {
    pub id: String,
    /// `study` or `capacity`.
    pub kind: String,
    pub name: String,
    pub scenario_file: Option<String>,
    pub started_at: String,
    /// `running`, `done` or `interrupted`.
    pub status: String,
    /// `study.json` / `capacity.json`, once written.
    pub path: Option<PathBuf>,
}

/// What is known about a run when it starts.
#[derive(Debug, Clone, Default)]
pub struct NewRun {
    pub scenario: String,
    pub scenario_file: Option<String>,
    pub variant: Option<String>,
    pub study: Option<String>,
    pub load: Option<String>,
}

pub struct Store {
    dir: PathBuf,
    conn: Connection,
}

fn io_err(dir: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Io {
        dir: dir.display().to_string(),
        message: e.to_string(),
    }
}

/// The results directory: the flag, else `LOADLAB_RESULTS`, else `./loadlab-results`.
pub fn resolve_dir(flag: Option<&Path>) -> PathBuf {
    if let Some(p) = flag {
        return p.to_path_buf();
    }
    match std::env::var_os(RESULTS_ENV) {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from(DEFAULT_DIR),
    }
}

/// A new sortable id: `<prefix>YYYYMMDD-HHMMSS-xxxx`.
pub fn new_id(prefix: &str) -> String {
    let stamp = loadlab_metrics::result::rfc3339(SystemTime::now());
    let digits: String = stamp.chars().filter(|c| c.is_ascii_digit()).collect();
    let (date, time) = digits.split_at(8.min(digits.len()));
    format!("{prefix}{date}-{time}-{:04x}", fastrand::u16(..))
}

const SCHEMA_SQL: &str = "
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    started_at TEXT NOT NULL,
    scenario TEXT NOT NULL,
    scenario_file TEXT,
    variant TEXT,
    study TEXT,
    status TEXT NOT NULL,
    pid INTEGER,
    load TEXT,
    rate REAL,
    p95_ms REAL,
    error_rate REAL,
    valid INTEGER,
    passed INTEGER,
    path TEXT
);
CREATE INDEX IF NOT EXISTS runs_study ON runs(study);
CREATE TABLE IF NOT EXISTS studies (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    scenario_file TEXT,
    started_at TEXT NOT NULL,
    status TEXT NOT NULL,
    pid INTEGER,
    path TEXT
);
";

const RUN_COLUMNS: &str = "id, started_at, scenario, scenario_file, variant, study, status, load, rate, p95_ms, error_rate, valid, passed, path";

fn run_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RunRecord> {
    Ok(RunRecord {
        id: row.get(0)?,
        started_at: row.get(1)?,
        scenario: row.get(2)?,
        scenario_file: row.get(3)?,
        variant: row.get(4)?,
        study: row.get(5)?,
        status: row.get(6)?,
        load: row.get(7)?,
        rate: row.get(8)?,
        p95_ms: row.get(9)?,
        error_rate: row.get(10)?,
        valid: row.get(11)?,
        passed: row.get(12)?,
        path: row.get::<_, Option<String>>(13)?.map(PathBuf::from),
    })
}

const STUDY_COLUMNS: &str = "id, kind, name, scenario_file, started_at, status, path";

fn study_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<StudyRecord> {
    Ok(StudyRecord {
        id: row.get(0)?,
        kind: row.get(1)?,
        name: row.get(2)?,
        scenario_file: row.get(3)?,
        started_at: row.get(4)?,
        status: row.get(5)?,
        path: row.get::<_, Option<String>>(6)?.map(PathBuf::from),
    })
}

fn process_alive(pid: i64) -> bool {
    if pid == i64::from(std::process::id()) {
        return true;
    }
    let proc_dir = Path::new("/proc");
    if !proc_dir.exists() {
        return true; // cannot tell: leave it as running
    }
    proc_dir.join(pid.to_string()).exists()
}

/// Writes `bytes` to `path` through a temporary file and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

impl Store {
    /// Opens (creating it if needed) the store in `dir`, and marks runs whose process died
    /// as `interrupted`.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
        let conn = Connection::open(dir.join("loadlab.db"))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch(SCHEMA_SQL)?;
        let store = Store {
            dir: dir.to_path_buf(),
            conn,
        };
        store.mark_dead()?;
        Ok(store)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn mark_dead(&self) -> Result<(), StoreError> {
        for table in ["runs", "studies"] {
            let mut stmt = self.conn.prepare(&format!(
                "SELECT id, pid FROM {table} WHERE status = 'running'"
            ))?;
            let rows: Vec<(String, Option<i64>)> = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()?;
            for (id, pid) in rows {
                if !pid.is_some_and(process_alive) {
                    self.conn.execute(
                        &format!("UPDATE {table} SET status = 'interrupted' WHERE id = ?1"),
                        params![id],
                    )?;
                }
            }
        }
        Ok(())
    }

    /// Indexes a run that is starting; returns its id.
    pub fn begin_run(&self, run: &NewRun) -> Result<String, StoreError> {
        let id = new_id("r");
        self.conn.execute(
            "INSERT INTO runs (id, started_at, scenario, scenario_file, variant, study, status, pid, load)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7, ?8)",
            params![
                id,
                loadlab_metrics::result::rfc3339(SystemTime::now()),
                run.scenario,
                run.scenario_file,
                run.variant,
                run.study,
                i64::from(std::process::id()),
                run.load
            ],
        )?;
        Ok(id)
    }

    /// Directory of a run's artifacts.
    pub fn run_dir(&self, id: &str) -> PathBuf {
        self.dir.join("runs").join(id)
    }

    /// Stores a finished run (JSON and HDR log) and completes its index row; returns the
    /// path of its `run.json`. A run interrupted by Ctrl-C is stored and marked `interrupted`.
    pub fn finish_run(&self, id: &str, result: &RunResult) -> Result<PathBuf, StoreError> {
        let dir = self.run_dir(id);
        std::fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
        let json = dir.join("run.json");
        write_atomic(&json, result.to_json().as_bytes()).map_err(|e| io_err(&dir, e))?;
        let hlog = hdr_log(result);
        write_atomic(&dir.join("latency.hlog"), &hlog).map_err(|e| io_err(&dir, e))?;
        let error_rate = if result.requests.total > 0 {
            Some(result.requests.failed as f64 / result.requests.total as f64)
        } else {
            None
        };
        let status = if result.interrupted {
            "interrupted"
        } else {
            "done"
        };
        self.conn.execute(
            "UPDATE runs SET status = ?2, started_at = ?3, rate = ?4, p95_ms = ?5, error_rate = ?6,
             valid = ?7, passed = ?8, path = ?9 WHERE id = ?1",
            params![
                id,
                status,
                result.started_at,
                result.requests.rate,
                (result.latency_ms.count > 0).then_some(result.latency_ms.p95),
                error_rate,
                result.valid,
                result.thresholds.iter().all(|t| t.ok),
                json.display().to_string()
            ],
        )?;
        Ok(json)
    }

    /// Marks a run that could not be made (e.g. target unreachable).
    pub fn fail_run(&self, id: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE runs SET status = 'failed' WHERE id = ?1",
            params![id],
        )?;
        Ok(())
    }

    /// Most recent runs first.
    pub fn runs(&self, limit: usize) -> Result<Vec<RunRecord>, StoreError> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?1"
        ))?;
        let rows = stmt
            .query_map(params![limit as i64], run_row)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Runs of a study, in run order.
    pub fn study_runs(&self, study: &str) -> Result<Vec<RunRecord>, StoreError> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE study = ?1 ORDER BY rowid"
        ))?;
        let rows = stmt
            .query_map(params![study], run_row)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// A run by id or unique id prefix.
    pub fn run(&self, id: &str) -> Result<RunRecord, StoreError> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1 OR id LIKE ?2 ORDER BY (id = ?1) DESC LIMIT 2"
        ))?;
        let rows: Vec<RunRecord> = stmt
            .query_map(params![id, format!("{}%", escape_like(id))], run_row)?
            .collect::<Result<_, _>>()?;
        match rows.as_slice() {
            [one] => Ok(one.clone()),
            [first, ..] if first.id == id => Ok(first.clone()),
            [] => Err(StoreError::NotFound(format!(
                "no run `{id}` in {}",
                self.dir.display()
            ))),
            _ => Err(StoreError::NotFound(format!(
                "`{id}` matches several runs: give more of the id"
            ))),
        }
    }

    /// The stored result of a completed run.
    pub fn load_run(&self, id: &str) -> Result<(RunRecord, RunResult), StoreError> {
        let rec = self.run(id)?;
        let path = rec.path.clone().ok_or_else(|| {
            StoreError::NotFound(format!("run {} has no result ({})", rec.id, rec.status))
        })?;
        let text = std::fs::read_to_string(&path).map_err(|e| io_err(&path, e))?;
        let result: RunResult = serde_json::from_str(&text).map_err(|e| io_err(&path, e))?;
        Ok((rec, result))
    }

    /// Indexes a study (`kind` = `study`) or capacity search (`capacity`) that is starting;
    /// returns its id and the directory for its files.
    pub fn begin_study(
        &self,
        kind: &str,
        name: &str,
        scenario_file: Option<&str>,
    ) -> Result<(String, PathBuf), StoreError> {
        let id = new_id(if kind == "capacity" { "c" } else { "s" });
        let dir = self.study_dir(kind, &id);
        std::fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
        self.conn.execute(
            "INSERT INTO studies (id, kind, name, scenario_file, started_at, status, pid)
             VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6)",
            params![
                id,
                kind,
                name,
                scenario_file,
                loadlab_metrics::result::rfc3339(SystemTime::now()),
                i64::from(std::process::id())
            ],
        )?;
        Ok((id, dir))
    }

    pub fn study_dir(&self, kind: &str, id: &str) -> PathBuf {
        let sub = if kind == "capacity" {
            "capacity"
        } else {
            "studies"
        };
        self.dir.join(sub).join(id)
    }

    /// Records where a study's result file is and whether it completed.
    pub fn finish_study(&self, id: &str, path: &Path, interrupted: bool) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE studies SET status = ?2, path = ?3 WHERE id = ?1",
            params![
                id,
                if interrupted { "interrupted" } else { "done" },
                path.display().to_string()
            ],
        )?;
        Ok(())
    }

    /// A study or capacity search by id or unique prefix; `last` is the most recent study.
    pub fn study(&self, id: &str) -> Result<StudyRecord, StoreError> {
        if id == "last" {
            return self
                .conn
                .query_row(
                    &format!("SELECT {STUDY_COLUMNS} FROM studies WHERE kind = 'study' AND path IS NOT NULL ORDER BY started_at DESC, rowid DESC LIMIT 1"),
                    [],
                    study_row,
                )
                .optional()?
                .ok_or_else(|| StoreError::NotFound(format!("no study in {}", self.dir.display())));
        }
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {STUDY_COLUMNS} FROM studies WHERE id = ?1 OR id LIKE ?2 ORDER BY (id = ?1) DESC LIMIT 2"
        ))?;
        let rows: Vec<StudyRecord> = stmt
            .query_map(params![id, format!("{}%", escape_like(id))], study_row)?
            .collect::<Result<_, _>>()?;
        match rows.as_slice() {
            [one] => Ok(one.clone()),
            [first, ..] if first.id == id => Ok(first.clone()),
            [] => Err(StoreError::NotFound(format!(
                "no study `{id}` in {}",
                self.dir.display()
            ))),
            _ => Err(StoreError::NotFound(format!(
                "`{id}` matches several studies: give more of the id"
            ))),
        }
    }

    /// Most recent studies and capacity searches first.
    pub fn studies(&self, limit: usize) -> Result<Vec<StudyRecord>, StoreError> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {STUDY_COLUMNS} FROM studies ORDER BY started_at DESC, rowid DESC LIMIT ?1"
        ))?;
        let rows = stmt
            .query_map(params![limit as i64], study_row)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

fn escape_like(s: &str) -> String {
    s.replace(['%', '_'], "")
}

/// The run's histograms in the HdrHistogram interval log format (one interval spanning the
/// measured period per histogram, tagged `latency` and `service_time`; values in µs, the
/// max column in ms), readable by HdrHistogram's log tools.
pub fn hdr_log(result: &RunResult) -> Vec<u8> {
    use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
    use hdrhistogram::serialization::V2DeflateSerializer;
    let mut out = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let start = parse_rfc3339(&result.started_at).unwrap_or(SystemTime::UNIX_EPOCH);
    let mut builder = IntervalLogWriterBuilder::new();
    builder
        .add_comment(&format!(
            "loadlab {} run `{}` (values in microseconds)",
            result.tool_version, result.name
        ))
        .with_start_time(start)
        .with_base_time(start)
        .with_max_value_divisor(1000.0);
    let Ok(mut writer) = builder.begin_log_with(&mut out, &mut serializer) else {
        return Vec::new();
    };
    let offset = std::time::Duration::from_secs_f64(result.warmup_s.max(0.0));
    let length = std::time::Duration::from_secs_f64(result.duration_s.max(0.0));
    for (tag, text) in [
        ("latency", &result.histograms.latency),
        ("service_time", &result.histograms.service_time),
    ] {
        if let Some(h) = loadlab_metrics::result::decode_histogram(text) {
            let _ = writer.write_histogram(&h, offset, length, Tag::new(tag));
        }
    }
    drop(writer);
    out
}

/// Parses `YYYY-MM-DDTHH:MM:SSZ` (what the run JSON holds).
fn parse_rfc3339(s: &str) -> Option<SystemTime> {
    let b = s.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3600 + mm * 60 + ss;
    u64::try_from(secs)
        .ok()
        .map(|s| SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(s))
}

/// Test support: sets the process id recorded for a run (to simulate a crashed process).
#[doc(hidden)]
pub fn debug_set_pid(dir: &Path, id: &str, pid: i64) -> Result<(), StoreError> {
    let conn = Connection::open(dir.join("loadlab.db"))?;
    conn.execute("UPDATE runs SET pid = ?2 WHERE id = ?1", params![id, pid])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trip() {
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_767_225_600 + 3723);
        let s = loadlab_metrics::result::rfc3339(t);
        assert_eq!(parse_rfc3339(&s), Some(t));
    }

    #[test]
    fn ids_sort_by_time() {
        let id = new_id("r");
        assert!(id.starts_with('r'));
        assert_eq!(id.len(), 1 + 8 + 1 + 6 + 1 + 4);
    }
}
