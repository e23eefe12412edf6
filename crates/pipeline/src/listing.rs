//! What a run store holds, read for `loadlab runs`: the most recent runs, one run, study or
//! capacity search, the studies, and the distributed runs under an object-storage prefix.
//! Each function gathers typed rows; `loadlab_report::runs_terminal` writes them.

use crate::PipelineError;
use loadlab_analysis::capacity::CapacityResult;
use loadlab_analysis::study::StudyResult;
use loadlab_metrics::RunResult;
use loadlab_remote::{find_runs, Remote, RunListing, SegmentState};
use loadlab_report::runs_terminal::{RemoteRun, RemoteSegment};
use loadlab_store::{RunRecord, Store, StudyKind, StudyRecord};
use std::path::{Path, PathBuf};

/// What `loadlab runs --results` names: a local run store (dead runs recovered as it opens)
/// or an object-storage prefix of distributed runs.
pub enum RunsPlace {
    Local(Store),
    Remote(Remote),
}

impl RunsPlace {
    /// Opens what `results` names; `local_only` (`runs show`, `runs studies`) refuses a prefix.
    /// `warn` hears of stored runs that could not be recovered.
    pub fn open(
        results: Option<&Path>,
        local_only: bool,
        warn: &mut dyn FnMut(&str),
    ) -> Result<Self, PipelineError> {
        let dir = loadlab_store::resolve_dir(results);
        let Some(url) = crate::remote::url_of(&dir)? else {
            return Ok(RunsPlace::Local(crate::store::open(&dir, warn)?));
        };
        if local_only {
            return Err(PipelineError::bad_input(
                "`runs show` and `runs studies` read the local run store: merge a distributed run first (`loadlab merge URL`), then show it by its id",
            ));
        }
        Ok(RunsPlace::Remote(Remote::open(&url)?))
    }
}

/// The most recent runs (`limit` of them), newest first, and how many the store holds.
pub fn runs(store: &Store, limit: usize) -> Result<(Vec<RunRecord>, usize), PipelineError> {
    Ok(store.runs(limit)?)
}

/// The most recent studies and capacity searches (`limit` of them).
pub fn studies(store: &Store, limit: usize) -> Result<Vec<StudyRecord>, PipelineError> {
    Ok(store.studies(limit)?)
}

/// One stored run, study or capacity search, as `loadlab runs show` shows it.
pub enum Shown {
    /// A capacity search and its result file; `result` is `Err` when the file is not a
    /// capacity result (its first line is shown before the error, as it always was).
    Capacity {
        record: StudyRecord,
        path: PathBuf,
        result: Result<Box<CapacityResult>, PipelineError>,
    },
    /// A study and its result file; `result` as for a capacity search.
    Study {
        record: StudyRecord,
        path: PathBuf,
        result: Result<Box<StudyResult>, PipelineError>,
    },
    /// A run, its directory and its summary.
    Run {
        record: RunRecord,
        dir: PathBuf,
        result: Box<RunResult>,
    },
}

/// One stored run, study or capacity search (`last`: the latest run).
pub fn show(store: &Store, id: &str, warn: &mut dyn FnMut(&str)) -> Result<Shown, PipelineError> {
    // A study or capacity search id first (`s…`, `c…`), then a run id or `last`.
    if id != "last" {
        if let Ok(s) = store.study(id) {
            let path = s.path.clone().ok_or_else(|| {
                PipelineError::bad_input(format!(
                    "{} {} has no result yet ({})",
                    s.kind, s.id, s.status
                ))
            })?;
            let text = std::fs::read_to_string(&path)
                .map_err(|e| PipelineError::bad_input(format!("{}: {e}", path.display())))?;
            let bad =
                |e: serde_json::Error| PipelineError::bad_input(format!("{}: {e}", path.display()));
            return Ok(if s.kind == StudyKind::Capacity {
                let result = serde_json::from_str(&text).map(Box::new).map_err(bad);
                Shown::Capacity {
                    record: s,
                    path,
                    result,
                }
            } else {
                let result = serde_json::from_str(&text).map(Box::new).map_err(bad);
                Shown::Study {
                    record: s,
                    path,
                    result,
                }
            });
        }
    }
    let (record, result) = crate::store::load_run(store, id, warn)?;
    let dir = store.run_dir(&record.id);
    Ok(Shown::Run {
        record,
        dir,
        result: Box::new(result),
    })
}

/// The distributed runs under an object-storage prefix: how many there are, and the newest
/// `limit` of them, newest first, each with its segments.
pub fn remote_runs(
    remote: &Remote,
    limit: usize,
) -> Result<(usize, Vec<RemoteRun>), PipelineError> {
    let runs = find_runs(remote)?;
    let newest = runs.iter().rev().take(limit).map(remote_run).collect();
    Ok((runs.len(), newest))
}

fn remote_run(r: &RunListing) -> RemoteRun {
    RemoteRun {
        prefix: r.prefix.clone(),
        name: r.name.clone(),
        started_at: r.started_at.clone(),
        count: r.count,
        merged: r.merged,
        barrier_failed: r.barrier_failed,
        start_agreed: r.start_agreed,
        segments: r.segments.iter().map(remote_segment).collect(),
    }
}

fn remote_segment(s: &SegmentState) -> RemoteSegment {
    RemoteSegment {
        index: s.index,
        announced: s.announced,
        has_record: s.has_record,
        ended: s.ended,
        batches: s.batches,
        last_upload_unix_s: s.last_upload_unix_s,
    }
}
