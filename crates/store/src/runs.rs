//! Runs in the index: begun when the load starts, completed with their summary, recovered
//! from their record when their process died.

use crate::{
    escape_like, insert_with_new_id, io_err, labels_match, new_id, Labels, RunStatus, Store,
    StoreError,
};
use loadlab_metrics::RunResult;
use rusqlite::{params, OptionalExtension};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

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
    pub status: RunStatus,
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
    /// `run.json`, once the run's summary exists.
    pub path: Option<PathBuf>,
    /// Requests in the result (warm-up included).
    pub requests: Option<u64>,
    /// `i/N` for a segment of a plan.
    pub segment: Option<String>,
    /// For a merged run: the runs or directories it was merged from.
    pub merged_from: Option<String>,
    /// The summary covers only part of the plan (interrupted, or recovered after a crash).
    pub partial: bool,
    /// Fingerprint of the resolved plan: runs with the same one measured the same load.
    pub plan_hash: Option<String>,
    /// `--label` / `LOADLAB_LABELS` pairs (commit, branch…).
    pub labels: Labels,
}

/// What is known about a run when it starts.
#[derive(Debug, Clone, Default)]
pub struct NewRun {
    pub scenario: String,
    pub scenario_file: Option<String>,
    pub variant: Option<String>,
    pub study: Option<String>,
    pub load: Option<String>,
    pub segment: Option<String>,
    pub plan_hash: Option<String>,
    pub merged_from: Option<String>,
    /// Labels stored with the run.
    pub labels: Labels,
}

use crate::layout::{ResultFile, RUNS_DIR};

/// The run directories (each holding a run record) of a results directory (`--results DIR`),
/// sorted by id: what a user means by "this results directory" when it holds one run. Read
/// from the files alone, without the index, so a directory copied from another machine works.
pub fn run_dirs_in(results: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(results.join(RUNS_DIR)) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| loadlab_record::is_record(p))
        .collect();
    dirs.sort();
    dirs
}

const RUN_COLUMNS: &str = "id, started_at, scenario, scenario_file, variant, study, status, load, rate, p95_ms, error_rate, valid, passed, path, requests, segment, merged_from, partial, pid, plan_hash";

fn run_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RunRecord> {
    let mut status = RunStatus::from_index(&row.get::<_, String>(6)?);
    let pid: Option<i64> = row.get(18)?;
    // A run whose process is gone is not running: it died before the index could be updated.
    if status == RunStatus::Running && !pid.is_some_and(crate::process_alive) {
        status = RunStatus::Interrupted;
    }
    Ok(RunRecord {
        id: row.get(0)?,
        started_at: row.get(1)?,
        scenario: row.get(2)?,
        scenario_file: row.get(3)?,
        variant: row.get(4)?,
        study: row.get(5)?,
        status,
        load: row.get(7)?,
        rate: row.get(8)?,
        p95_ms: row.get(9)?,
        error_rate: row.get(10)?,
        valid: row.get(11)?,
        passed: row.get(12)?,
        path: row.get::<_, Option<String>>(13)?.map(PathBuf::from),
        requests: row.get::<_, Option<i64>>(14)?.map(|n| n.max(0) as u64),
        segment: row.get(15)?,
        merged_from: row.get(16)?,
        partial: row.get::<_, Option<bool>>(17)?.unwrap_or(false),
        plan_hash: row.get(19)?,
        labels: Labels::new(),
    })
}

impl Store {
    /// A row's run, its run.json where this store holds it now.
    fn run_at(&self, row: &rusqlite::Row<'_>) -> rusqlite::Result<RunRecord> {
        let mut run = run_row(row)?;
        run.path = run.path.map(|p| self.locate(p));
        Ok(run)
    }

    /// Indexes a run that is starting; returns its id (its record goes in `run_dir(id)`).
    pub fn begin_run(&self, run: &NewRun) -> Result<String, StoreError> {
        self.begin_run_with_ids(run, || new_id("r"))
    }

    fn begin_run_with_ids(
        &self,
        run: &NewRun,
        next_id: impl FnMut() -> String,
    ) -> Result<String, StoreError> {
        insert_with_new_id(next_id, |id| {
            self.conn().execute(
                "INSERT INTO runs (id, started_at, scenario, scenario_file, variant, study, status, pid, load, segment, plan_hash, merged_from)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7, ?8, ?9, ?10, ?11)",
                params![
                    id,
                    loadlab_metrics::result::rfc3339(SystemTime::now()),
                    run.scenario,
                    run.scenario_file,
                    run.variant,
                    run.study,
                    i64::from(std::process::id()),
                    run.load,
                    run.segment,
                    run.plan_hash,
                    run.merged_from
                ],
            )?;
            self.set_labels(id, &run.labels)
        })
    }

    /// Fills in the labels of index rows (kept in their own table).
    fn with_labels(&self, mut rows: Vec<RunRecord>) -> Result<Vec<RunRecord>, StoreError> {
        for row in &mut rows {
            row.labels = self.labels(&row.id)?;
        }
        Ok(rows)
    }

    /// The completed runs of a scenario made on their own (not part of a study or capacity
    /// search), oldest first, with every label of `filter`: the points of its run history.
    pub fn history_runs(
        &self,
        scenario: &str,
        filter: &Labels,
    ) -> Result<Vec<RunRecord>, StoreError> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE scenario = ?1 AND study IS NULL AND path IS NOT NULL
             AND segment IS NULL ORDER BY started_at, rowid"
        ))?;
        let rows = stmt
            .query_map(params![scenario], |r| self.run_at(r))?
            .collect::<Result<_, _>>()?;
        let rows = self.with_labels(rows)?;
        Ok(rows
            .into_iter()
            .filter(|r| labels_match(&r.labels, filter))
            .collect())
    }

    /// Directory of a run's record and summary.
    pub fn run_dir(&self, id: &str) -> PathBuf {
        self.dir().join(RUNS_DIR).join(id)
    }

    /// Writes a run's summary (`run.json`) beside its record and completes its index row;
    /// returns the path. An interrupted run is stored and marked `interrupted`.
    pub fn finish_run(&self, id: &str, result: &RunResult) -> Result<PathBuf, StoreError> {
        let dir = self.run_dir(id);
        std::fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
        let json = dir.join(ResultFile::Run.file_name());
        crate::write_atomic(&json, (result.to_json() + "\n").as_bytes())
            .map_err(|e| io_err(&dir, e))?;
        let error_rate = (result.requests.total > 0)
            .then(|| result.requests.failed as f64 / result.requests.total as f64);
        let status = if result.interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Done
        };
        self.conn().execute(
            "UPDATE runs SET status = ?2, started_at = ?3, rate = ?4, p95_ms = ?5, error_rate = ?6,
             valid = ?7, passed = ?8, path = ?9, requests = ?10, partial = ?11 WHERE id = ?1",
            params![
                id,
                status,
                result.started_at,
                result.requests.rate,
                (result.latency_ms.count > 0).then_some(result.latency_ms.p95),
                error_rate,
                // An imported run's validity was not judged: neither yes nor no.
                result.validity_judged().then_some(result.valid),
                result.thresholds.iter().all(|t| t.ok),
                self.path_in_index(&json),
                (result.requests.total + result.requests.warmup) as i64,
                result.interrupted
            ],
        )?;
        Ok(json)
    }

    /// Removes a run that was refused before any load (its target unreachable, too few open
    /// files): nothing was measured, and a row listed as `failed` would only hide the runs
    /// that were made.
    pub fn forget_run(&self, id: &str) -> Result<(), StoreError> {
        self.conn()
            .execute("DELETE FROM labels WHERE owner = ?1", params![id])?;
        self.conn()
            .execute("DELETE FROM runs WHERE id = ?1", params![id])?;
        let dir = self.run_dir(id);
        match std::fs::remove_dir_all(&dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_err(&dir, e)),
            _ => Ok(()),
        }
    }

    /// Marks a run that could not be made (e.g. target unreachable).
    pub fn fail_run(&self, id: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE runs SET status = ?2 WHERE id = ?1",
            params![id, RunStatus::Failed],
        )?;
        Ok(())
    }

    /// Marks a run that was measured but whose record or summary could not be written
    /// (`interrupted`: it did not run to its end). The usual cause is a full disk, where the
    /// rollback journal cannot be created either: then the row is rewritten in place, without
    /// a journal (the update changes one page and adds nothing to the file). Left `running`,
    /// the run would be listed `interrupted` once its process is gone, which it was not.
    pub fn mark_not_stored(&self, id: &str, interrupted: bool) -> Result<(), StoreError> {
        let update = || {
            self.conn().execute(
                "UPDATE runs SET status = ?2, partial = ?3 WHERE id = ?1",
                params![id, RunStatus::NotStored, interrupted],
            )
        };
        let Err(first) = update() else {
            return Ok(());
        };
        self.conn().execute_batch("PRAGMA journal_mode = MEMORY")?;
        let again = update();
        let _ = self.conn().execute_batch("PRAGMA journal_mode = DELETE");
        again.map(|_| ()).map_err(|_| StoreError::Db(first))
    }

    /// Runs with a record whose summary was never written and can be derived from it:
    /// interrupted runs without one (their process died) and runs not stored (a full disk:
    /// the record may be whole, and the space back). The caller derives the summary from the
    /// record and stores it with `finish_run`. Only these rows are looked at, so opening a
    /// store costs the same with 10 runs or 10,000; a `run.json` deleted after it was written
    /// is found where it is read ([`Store::summary_missing`]).
    pub fn unrecovered(&self) -> Result<Vec<RunRecord>, StoreError> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE path IS NULL
             AND status IN ('interrupted', 'not_stored') ORDER BY rowid"
        ))?;
        let rows: Vec<RunRecord> = stmt
            .query_map([], |r| self.run_at(r))?
            .collect::<Result<_, _>>()?;
        Ok(rows
            .into_iter()
            .filter(|r| loadlab_record::is_record(&self.run_dir(&r.id)))
            .collect())
    }

    /// Whether a run's summary was written once and is gone (deleted by hand, a cache that
    /// kept only the records) while its record is whole: it can be derived again.
    pub fn summary_missing(&self, run: &RunRecord) -> bool {
        run.path.as_ref().is_some_and(|p| !p.exists())
            && loadlab_record::is_record(&self.run_dir(&run.id))
    }

    /// Most recent runs first, and how many there are in all.
    pub fn runs(&self, limit: usize) -> Result<(Vec<RunRecord>, usize), StoreError> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?1"
        ))?;
        let rows = stmt
            .query_map(params![limit as i64], |r| self.run_at(r))?
            .collect::<Result<_, _>>()?;
        let rows = self.with_labels(rows)?;
        let total: i64 = self
            .conn()
            .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))?;
        Ok((rows, total as usize))
    }

    /// Runs of a study, in run order.
    pub fn study_runs(&self, study: &str) -> Result<Vec<RunRecord>, StoreError> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE study = ?1 ORDER BY rowid"
        ))?;
        let rows = stmt
            .query_map(params![study], |r| self.run_at(r))?
            .collect::<Result<_, _>>()?;
        self.with_labels(rows)
    }

    /// A run by id or unique id prefix; `last` is the most recent run.
    pub fn run(&self, id: &str) -> Result<RunRecord, StoreError> {
        if id == "last" {
            return self
                .conn()
                .query_row(
                    &format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1"),
                    [],
                    |r| self.run_at(r),
                )
                .optional()?
                .ok_or_else(|| {
                    StoreError::NotFound(format!("no run in {}", self.dir().display()))
                })
                .and_then(|r| Ok(self.with_labels(vec![r])?.remove(0)));
        }
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1 OR id LIKE ?2 ORDER BY (id = ?1) DESC LIMIT 2"
        ))?;
        let rows: Vec<RunRecord> = stmt
            .query_map(params![id, format!("{}%", escape_like(id))], |r| {
                self.run_at(r)
            })?
            .collect::<Result<_, _>>()?;
        let rows = self.with_labels(rows)?;
        match rows.as_slice() {
            [one] => Ok(one.clone()),
            [first, ..] if first.id == id => Ok(first.clone()),
            [] => Err(StoreError::NotFound(format!(
                "no run `{id}` in {}",
                self.dir().display()
            ))),
            _ => Err(StoreError::NotFound(format!(
                "`{id}` matches several runs: give more of the id"
            ))),
        }
    }

    /// The stored summary of a run.
    pub fn load_run(&self, id: &str) -> Result<(RunRecord, RunResult), StoreError> {
        let rec = self.run(id)?;
        let path = rec.path.clone().ok_or_else(|| {
            StoreError::NotFound(format!(
                "run {} has no result ({}{})",
                rec.id,
                rec.status,
                if rec.status == RunStatus::Running {
                    ": it is still running"
                } else {
                    ""
                }
            ))
        })?;
        let damaged = |e: &dyn std::fmt::Display| {
            if loadlab_record::is_record(&self.run_dir(&rec.id)) {
                io_err(
                    &path,
                    format!("{e}\n  hint: the run's record beside it is whole: delete this file and the next loadlab command rebuilds it from the record"),
                )
            } else {
                io_err(&path, e)
            }
        };
        let text = std::fs::read_to_string(&path).map_err(|e| damaged(&e))?;
        let result = RunResult::from_json(&text).map_err(|e| damaged(&e))?;
        Ok((rec, result))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_id_already_taken_is_drawn_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let run = NewRun::default();
        let first = store
            .begin_run_with_ids(&run, || "r20261123-120000-abcd".to_string())
            .unwrap();
        let mut ids = ["r20261123-120000-abcd", "r20261123-120000-0001"].into_iter();
        let second = store
            .begin_run_with_ids(&run, || ids.next().unwrap().to_string())
            .unwrap();
        assert_eq!(first, "r20261123-120000-abcd");
        assert_eq!(second, "r20261123-120000-0001");
        // Never an endless loop: an id generator stuck on a taken id is an error.
        assert!(store.begin_run_with_ids(&run, || first.clone()).is_err());
    }
}
