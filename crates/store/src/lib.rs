//! The run store: every run, study and capacity search is kept under one directory
//! (default `./loadlab-results/`, `LOADLAB_RESULTS` or `--results DIR` to change):
//!
//! ```text
//! loadlab-results/
//!   loadlab.db                 SQLite index of runs and studies (crate rusqlite, bundled SQLite)
//!   runs/<id>/                 the run record (record.json, intervals.hlog, counters.jsonl,
//!                              end.json; see loadlab_record) streamed as the run goes
//!   runs/<id>/run.json         its summary (schema loadlab.run.v2), derived from the record
//!   studies/<id>/study.json    a study (schema loadlab.study.v1), rewritten after every run
//!   capacity/<id>/capacity.json
//! ```
//!
//! A run is indexed as `running` when it starts (with the process id) and completed when it
//! ends. A run whose process died is shown `interrupted` on the next open; its record still
//! holds every completed interval, and [`Store::unrecovered`] lists such runs so the caller
//! can derive their summary (`loadlab runs`, `report`, `compare` then work on them, marked
//! partial). Files are written to a temporary name and renamed.
//!
//! Runs, studies and capacity searches carry labels (`commit`, `branch`…; see `labels.rs`);
//! [`Store::history_runs`] and [`Store::history_studies`] list a scenario's points oldest first
//! for `loadlab history`.
//!
//! Crate chosen: `rusqlite` with bundled SQLite (no system library needed; concurrent
//! processes — segments, a study and a `runs` listing — share the index safely).

mod labels;
mod layout;
mod runs;
mod schema;
mod status;
mod studies;

pub use labels::{
    labels_from_env, matches as labels_match, parse_label, parse_label_list, LabelError, Labels,
    LABELS_ENV,
};
pub use layout::{
    new_comparison_file, results_dir_of, run_file_in, ResultFile, StudyKind, StudyStatus,
};
pub use runs::{run_dirs_in, NewRun, RunRecord};
pub use status::RunStatus;
pub use studies::StudyRecord;

use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Environment variable naming the results directory.
pub const RESULTS_ENV: &str = "LOADLAB_RESULTS";
/// The SQLite index of a results directory.
const INDEX_FILE: &str = "loadlab.db";
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

pub(crate) fn io_err(dir: &Path, e: impl std::fmt::Display) -> StoreError {
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

/// Inserts a row under a new id: draws ids with `next_id` until `insert` takes one not taken
/// yet (at most 8 draws). Ids are a timestamp and 16 random bits, so two runs or studies begun
/// in the same second may draw the same one; that is drawn again, never a failed run.
pub(crate) fn insert_with_new_id(
    mut next_id: impl FnMut() -> String,
    mut insert: impl FnMut(&str) -> Result<(), StoreError>,
) -> Result<String, StoreError> {
    let mut draws = 0;
    loop {
        let id = next_id();
        draws += 1;
        match insert(&id) {
            Err(StoreError::Db(rusqlite::Error::SqliteFailure(e, _)))
                if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY && draws < 8 => {}
            Err(e) => return Err(e),
            Ok(()) => return Ok(id),
        }
    }
}

pub use loadlab_record::write_atomic;

/// Checks that `dir` can hold results (creating it), before any load is sent: a run must
/// never be made only to find that it cannot be kept.
pub fn check_writable(dir: &Path) -> Result<(), StoreError> {
    not_a_file(dir)?;
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let probe = dir.join(format!(".loadlab-write-check-{}", std::process::id()));
    let result = std::fs::write(&probe, b"ok");
    let _ = std::fs::remove_file(&probe);
    result.map_err(|e| io_err(dir, format!("cannot write here: {e}")))
}

/// `--results ok.yaml` (a file where the directory of runs goes) said "File exists (os error
/// 17)"; it is said what it is.
fn not_a_file(dir: &Path) -> Result<(), StoreError> {
    if dir.is_file() {
        return Err(io_err(
            dir,
            "is a file: --results (or LOADLAB_RESULTS) names the directory that holds the runs, e.g. loadlab-results",
        ));
    }
    Ok(())
}

pub struct Store {
    dir: PathBuf,
    conn: Connection,
}

pub(crate) fn process_alive(pid: i64) -> bool {
    if pid == i64::from(std::process::id()) {
        return true;
    }
    let proc_dir = Path::new("/proc");
    if !proc_dir.exists() {
        return true; // cannot tell: leave it as running
    }
    proc_dir.join(pid.to_string()).exists()
}

impl Store {
    /// Opens (creating it if needed) the store in `dir`, and marks runs and studies whose
    /// process died as `interrupted`.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        not_a_file(dir)?;
        std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
        let index = dir.join(INDEX_FILE);
        let conn = Connection::open(&index)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        schema::migrate(&conn).map_err(|e| match e {
            rusqlite::Error::SqliteFailure(f, _)
                if f.code == rusqlite::ErrorCode::NotADatabase =>
            {
                io_err(
                    &index,
                    format!(
                        "not a loadlab run index (an SQLite database): it was overwritten or damaged\n  hint: move it away (`mv {0} {0}.bad`): loadlab makes a new index; the runs stay readable by their directory, e.g. `loadlab report {1}/<id>`",
                        index.display(),
                        dir.join(layout::RUNS_DIR).display()
                    ),
                )
            }
            other => StoreError::Db(other),
        })?;
        let store = Store {
            dir: dir.to_path_buf(),
            conn,
        };
        // A store that cannot be written (a full disk) can still be read: the runs whose
        // process died are then marked on a later open.
        let _ = store.mark_dead();
        Ok(store)
    }

    /// Whether `dir` holds a run store already (opening one creates it).
    pub fn exists_in(dir: &Path) -> bool {
        dir.join(INDEX_FILE).is_file()
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// How the index keeps a result file's path: relative to the store when the file is in it
    /// (`runs/<id>/run.json`), so that the store reads the same from any directory, and after
    /// it is moved or copied (a CI cache, an artifact).
    pub(crate) fn path_in_index(&self, path: &Path) -> String {
        path.strip_prefix(&self.dir)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// Where an indexed result file is now: in this store, under the last three parts of
    /// the path kept (`runs/<id>/run.json`; stores written before paths were kept relative
    /// to the store kept them relative to the writer's directory, or absolute), else that
    /// path as kept.
    pub(crate) fn locate(&self, kept: PathBuf) -> PathBuf {
        let parts: Vec<_> = kept.components().collect();
        let tail: PathBuf = parts[parts.len().saturating_sub(3)..].iter().collect();
        let here = self.dir.join(tail);
        if here.exists() || !kept.exists() {
            here
        } else {
            kept
        }
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
                        rusqlite::params![id],
                    )?;
                }
            }
        }
        Ok(())
    }
}

pub(crate) fn escape_like(s: &str) -> String {
    s.replace(['%', '_'], "")
}

/// Test support: sets the process id recorded for a run (to simulate a crashed process).
#[doc(hidden)]
pub fn debug_set_pid(dir: &Path, id: &str, pid: i64) -> Result<(), StoreError> {
    let conn = Connection::open(dir.join(INDEX_FILE))?;
    conn.execute(
        "UPDATE runs SET pid = ?2 WHERE id = ?1",
        rusqlite::params![id, pid],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sort_by_time() {
        let id = new_id("r");
        assert!(id.starts_with('r'));
        assert_eq!(id.len(), 1 + 8 + 1 + 6 + 1 + 4);
    }

    #[test]
    fn writability_is_checked_before_a_run() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_writable(&dir.path().join("new/sub")).is_ok());
        let file = dir.path().join("a-file");
        std::fs::write(&file, "x").unwrap();
        assert!(check_writable(&file.join("below")).is_err());
    }
}
