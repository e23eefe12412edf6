//! Studies and capacity searches in the index: begun, updated after every run (so a killed
//! study keeps what it did and can be resumed), finished.

use crate::layout::{StudyKind, StudyStatus};
use crate::{
    escape_like, insert_with_new_id, io_err, labels_match, new_id, Labels, Store, StoreError,
};
use rusqlite::{params, OptionalExtension};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A row of the study index (studies and capacity searches).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StudyRecord {
    pub id: String,
    pub kind: StudyKind,
    pub name: String,
    pub scenario_file: Option<String>,
    pub started_at: String,
    pub status: StudyStatus,
    /// `study.json` / `capacity.json`, once written.
    pub path: Option<PathBuf>,
    /// Fingerprint of the resolved study (a resume checks it is unchanged).
    pub plan_hash: Option<String>,
    pub runs_done: Option<u64>,
    pub runs_planned: Option<u64>,
    /// `--label` / `LOADLAB_LABELS` pairs (commit, branch…).
    pub labels: Labels,
}

const STUDY_COLUMNS: &str =
    "id, kind, name, scenario_file, started_at, status, path, plan_hash, runs_done, runs_planned";

fn study_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<StudyRecord> {
    Ok(StudyRecord {
        id: row.get(0)?,
        kind: StudyKind::from_index(&row.get::<_, String>(1)?),
        name: row.get(2)?,
        scenario_file: row.get(3)?,
        started_at: row.get(4)?,
        status: StudyStatus::from_index(&row.get::<_, String>(5)?),
        path: row.get::<_, Option<String>>(6)?.map(PathBuf::from),
        plan_hash: row.get(7)?,
        runs_done: row.get::<_, Option<i64>>(8)?.map(|n| n.max(0) as u64),
        runs_planned: row.get::<_, Option<i64>>(9)?.map(|n| n.max(0) as u64),
        labels: Labels::new(),
    })
}

impl Store {
    /// A row's study, its result file where this store holds it now.
    fn study_at(&self, row: &rusqlite::Row<'_>) -> rusqlite::Result<StudyRecord> {
        let mut study = study_row(row)?;
        study.path = study.path.map(|p| self.locate(p));
        Ok(study)
    }

    /// Indexes a study or capacity search that is starting; returns its id and the directory
    /// for its files.
    pub fn begin_study(
        &self,
        kind: StudyKind,
        name: &str,
        scenario_file: Option<&str>,
        plan_hash: Option<&str>,
    ) -> Result<(String, PathBuf), StoreError> {
        let id = insert_with_new_id(
            || new_id(kind.id_prefix()),
            |id| {
                let dir = self.study_dir(kind, id);
                std::fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
                self.conn().execute(
                    "INSERT INTO studies (id, kind, name, scenario_file, started_at, status, pid, plan_hash)
                     VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6, ?7)",
                    params![
                        id,
                        kind.as_str(),
                        name,
                        scenario_file,
                        loadlab_metrics::result::rfc3339(SystemTime::now()),
                        i64::from(std::process::id()),
                        plan_hash
                    ],
                )?;
                Ok(())
            },
        )?;
        let dir = self.study_dir(kind, &id);
        Ok((id, dir))
    }

    /// Takes an interrupted study or capacity search up again in this process.
    pub fn resume_study(&self, id: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE studies SET status = 'running', pid = ?2 WHERE id = ?1",
            params![id, i64::from(std::process::id())],
        )?;
        Ok(())
    }

    pub fn study_dir(&self, kind: StudyKind, id: &str) -> PathBuf {
        self.dir().join(kind.dir_name()).join(id)
    }

    /// The result file of a study or capacity search (`studies/<id>/study.json`).
    pub fn study_file(&self, kind: StudyKind, id: &str) -> PathBuf {
        self.study_dir(kind, id)
            .join(kind.result_file().file_name())
    }

    /// Records the study's result file after a run (it stays `running`).
    pub fn update_study(
        &self,
        id: &str,
        path: &Path,
        runs_done: usize,
        runs_planned: usize,
    ) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE studies SET path = ?2, runs_done = ?3, runs_planned = ?4 WHERE id = ?1",
            params![
                id,
                self.path_in_index(path),
                runs_done as i64,
                runs_planned as i64
            ],
        )?;
        Ok(())
    }

    /// Records where a study's result file is and whether it completed.
    pub fn finish_study(&self, id: &str, path: &Path, interrupted: bool) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE studies SET status = ?2, path = ?3 WHERE id = ?1",
            params![
                id,
                if interrupted {
                    StudyStatus::Interrupted
                } else {
                    StudyStatus::Done
                }
                .as_str(),
                self.path_in_index(path)
            ],
        )?;
        Ok(())
    }

    /// A study or capacity search by id or unique prefix; `last` is the most recent study
    /// (interrupted ones included: they hold the runs they made).
    pub fn study(&self, id: &str) -> Result<StudyRecord, StoreError> {
        if id == "last" {
            return self
                .conn()
                .query_row(
                    &format!("SELECT {STUDY_COLUMNS} FROM studies WHERE kind = 'study' AND path IS NOT NULL ORDER BY started_at DESC, rowid DESC LIMIT 1"),
                    [],
                    |r| self.study_at(r),
                )
                .optional()?
                .ok_or_else(|| StoreError::NotFound(format!("no study in {}", self.dir().display())))
                .and_then(|s| Ok(self.with_study_labels(vec![s])?.remove(0)));
        }
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {STUDY_COLUMNS} FROM studies WHERE id = ?1 OR id LIKE ?2 ORDER BY (id = ?1) DESC LIMIT 2"
        ))?;
        let rows: Vec<StudyRecord> = stmt
            .query_map(params![id, format!("{}%", escape_like(id))], |r| {
                self.study_at(r)
            })?
            .collect::<Result<_, _>>()?;
        let rows = self.with_study_labels(rows)?;
        match rows.as_slice() {
            [one] => Ok(one.clone()),
            [first, ..] if first.id == id => Ok(first.clone()),
            [] => Err(StoreError::NotFound(format!(
                "no study `{id}` in {}",
                self.dir().display()
            ))),
            _ => Err(StoreError::NotFound(format!(
                "`{id}` matches several studies: give more of the id"
            ))),
        }
    }

    /// Most recent studies and capacity searches first.
    pub fn studies(&self, limit: usize) -> Result<Vec<StudyRecord>, StoreError> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {STUDY_COLUMNS} FROM studies ORDER BY started_at DESC, rowid DESC LIMIT ?1"
        ))?;
        let rows = stmt
            .query_map(params![limit as i64], |r| self.study_at(r))?
            .collect::<Result<_, _>>()?;
        self.with_study_labels(rows)
    }

    fn with_study_labels(
        &self,
        mut rows: Vec<StudyRecord>,
    ) -> Result<Vec<StudyRecord>, StoreError> {
        for row in &mut rows {
            row.labels = self.labels(&row.id)?;
        }
        Ok(rows)
    }

    /// The studies named `name` that have a result file, oldest first, with every label of
    /// `filter`: the points of its study history (interrupted ones included, as their file
    /// says how many runs they hold).
    pub fn history_studies(
        &self,
        name: &str,
        filter: &Labels,
    ) -> Result<Vec<StudyRecord>, StoreError> {
        let mut stmt = self.conn().prepare(&format!(
            "SELECT {STUDY_COLUMNS} FROM studies WHERE kind = 'study' AND name = ?1 AND path IS NOT NULL
             ORDER BY started_at, rowid"
        ))?;
        let rows = stmt
            .query_map(params![name], |r| self.study_at(r))?
            .collect::<Result<_, _>>()?;
        let rows = self.with_study_labels(rows)?;
        Ok(rows
            .into_iter()
            .filter(|s| labels_match(&s.labels, filter))
            .collect())
    }
}
