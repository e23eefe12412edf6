//! Runs and merges in object storage. `run --results URL`: the run's record goes to the URL
//! while it runs (a pod has nowhere to keep a local store), a segment first meeting the others
//! at the start barrier. `merge URL`: the segments are downloaded and merged as local ones
//! are, into the local store and back under `URL/merged/` with the report.

use crate::measure::{execute, RunSpec, RunView};
use crate::merge::{merge_and_store, Merged};
use crate::PipelineError;
use loadlab_metrics::RunResult;
use loadlab_record::RecordSink;
use loadlab_remote::{
    download_run, parse_location, wait_for_segments, Barrier, BarrierOptions, Remote,
    ResultsLocation, RunLayout, UploadSink, UploadStats, WaitOptions, WaitOutcome, MERGED,
};
use loadlab_store::{Labels, Store};
use std::path::Path;
use std::time::Duration;
use url::Url;

/// The object-storage URL a results location names (`None`: a local directory).
pub fn url_of(results: &Path) -> Result<Option<Url>, PipelineError> {
    match parse_location(&results.to_string_lossy())? {
        ResultsLocation::Url(u) => Ok(Some(u)),
        ResultsLocation::Dir(_) => Ok(None),
    }
}

/// How a run in object storage meets the others and uploads its record.
#[derive(Debug, Clone, Copy)]
pub struct RemoteRunOptions {
    /// How long a segment waits at the start barrier for the others.
    pub barrier_timeout: Duration,
    /// How often the record's new intervals are uploaded (at least 200 ms).
    pub upload_every: Duration,
}

impl Default for RemoteRunOptions {
    fn default() -> Self {
        Self {
            barrier_timeout: Duration::from_secs(300),
            upload_every: Duration::from_secs(5),
        }
    }
}

impl RemoteRunOptions {
    /// Checks what the flags gave.
    pub fn checked(self) -> Result<Self, PipelineError> {
        if self.upload_every < Duration::from_millis(200) {
            return Err(PipelineError::bad_input(
                "--upload-every: give at least 200ms (every upload is two object-store requests)",
            ));
        }
        Ok(self)
    }
}

/// A run whose record went to object storage.
pub struct RemoteRun {
    pub result: RunResult,
    /// The record's URL.
    pub url: String,
    pub uploads: UploadStats,
    /// What could not be stored.
    pub errors: Vec<String>,
}

/// Runs `spec` (this process's share of it) with its record streamed to `url` and its
/// `labels` beside it (for `loadlab history`); `say` receives the barrier's messages.
pub fn run_to_url(
    mut spec: RunSpec<'_>,
    url: &Url,
    options: RemoteRunOptions,
    labels: &Labels,
    view: &mut dyn RunView,
    say: &mut dyn FnMut(&str),
) -> Result<RemoteRun, PipelineError> {
    let run = Remote::open(url)?;
    let segment = spec.share.segment;
    let record = run.at(&RunLayout { segment }.record_dir());
    let mut clock = None;
    match (segment, spec.share.start_at) {
        (Some(seg), None) => {
            let barrier = BarrierOptions {
                timeout: options.barrier_timeout,
                ..BarrierOptions::default()
            };
            let met = Barrier::new(&run, seg, &spec.scenario.fingerprint(), barrier)
                .meet(&mut |m| say(m))?;
            spec.share.start_at = Some(met.start);
            clock = met.clock;
        }
        _ => {
            if record.head(loadlab_record::META_FILE)?.is_some() {
                return Err(PipelineError::bad_input(format!(
                    "{} already holds a run record: give each run its own --results prefix",
                    record.url()
                )));
            }
        }
    }
    if !labels.is_empty() {
        let text = serde_json::to_vec(labels).expect("labels serialize");
        record.put(loadlab_remote::LABELS_FILE, text)?;
    }
    let sink = UploadSink::start(&record, options.upload_every, clock)?;
    let stats = sink.stats_handle();
    let (result, storage_error) = execute(
        spec,
        Some(Box::new(sink) as Box<dyn RecordSink>),
        record.url(),
        view,
    )?;
    let mut errors: Vec<String> = storage_error.into_iter().collect();
    if errors.is_empty() {
        if let Err(e) = record.put(
            loadlab_remote::SUMMARY_FILE,
            (result.to_json() + "\n").into_bytes(),
        ) {
            errors.push(format!("summary not stored: {e}"));
        }
    }
    Ok(RemoteRun {
        result,
        url: record.url().to_string(),
        uploads: stats(),
        errors,
    })
}

/// A distributed run merged from object storage.
pub struct RemoteMerge {
    pub merged: Merged,
    pub segments: usize,
    /// Where the merged run was uploaded (`URL/merged`).
    pub published: String,
}

/// Merges the distributed run at `url` into `store` and publishes it (with its report) under
/// `URL/merged/`. `wait` first waits that long for the segments to end; `say` receives
/// progress and warnings.
pub fn merge_from_url(
    url: &Url,
    wait: Option<Duration>,
    store: &Store,
    say: &mut dyn FnMut(&str),
) -> Result<RemoteMerge, PipelineError> {
    let run = Remote::open(url)?;
    if let Some(timeout) = wait {
        wait_for_end(&run, url, timeout, say)?;
    }
    let downloaded = download_run(&run)?;
    for u in &downloaded.unreadable {
        say(&format!("warning: {u} (counted as missing)"));
    }
    if downloaded.records.is_empty() {
        return Err(PipelineError::aborted(format!(
            "{url}: no segment record to merge{}",
            if wait.is_none() {
                " (still starting? `--wait 30m` waits for them)"
            } else {
                ""
            }
        )));
    }
    let mut merged = merge_and_store(&downloaded.records, run.url(), store)?;
    if merged.stored.is_some() {
        if let Err(e) = publish(&run, &store.run_dir(&merged.id), &merged) {
            merged.errors.push(e);
        }
    }
    Ok(RemoteMerge {
        merged,
        segments: downloaded.records.len(),
        published: format!("{}/{MERGED}/", run.url()),
    })
}

fn wait_for_end(
    run: &Remote,
    url: &Url,
    timeout: Duration,
    say: &mut dyn FnMut(&str),
) -> Result<(), PipelineError> {
    let options = WaitOptions {
        timeout,
        ..WaitOptions::default()
    };
    match wait_for_segments(run, options, &mut |m| say(m))? {
        WaitOutcome::AllEnded => Ok(()),
        WaitOutcome::BarrierFailed(reason) => Err(PipelineError::aborted(format!(
            "{url}: the start barrier failed, nothing ran: {reason}"
        ))),
        WaitOutcome::PlannedEndPassed { unended } | WaitOutcome::TimedOut { unended } => {
            if !unended.is_empty() {
                say(&format!(
                    "warning: segment(s) {} did not end (their pods died or are late): merging what they left",
                    unended.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
                ));
            }
            Ok(())
        }
    }
}

/// Writes the report beside the merged run and uploads the run's directory to `merged/`.
fn publish(run: &Remote, dir: &Path, merged: &Merged) -> Result<(), String> {
    let doc = loadlab_report::run_report(&merged.result, merged.result.load.planned.as_ref());
    crate::reports::write_both(&doc, dir, "report").map_err(|e| e.to_string())?;
    upload_dir(&run.at(MERGED), dir, "").map_err(|e| format!("merged result not uploaded: {e}"))
}

fn upload_dir(target: &Remote, dir: &Path, rel: &str) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        let name = entry.file_name().to_string_lossy().to_string();
        let key = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        let path = entry.path();
        if path.is_dir() {
            upload_dir(target, &path, &key)?;
        } else {
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            target.put(&key, bytes).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

impl RemoteRun {
    /// `stored in s3://… (6 intervals in 3 batches: 12 uploads, 41.0 KiB, 9.0 ms per upload, …)`.
    pub fn stored_line(&self) -> String {
        let (url, s, interrupted) = (&self.url, &self.uploads, self.result.interrupted);
        let per_put_ms = if s.puts > 0 {
            s.put_seconds * 1000.0 / f64::from(s.puts)
        } else {
            0.0
        };
        format!(
        "{} in {url} ({} intervals in {} batches: {} uploads, {:.1} KiB, {per_put_ms:.1} ms per upload, slowest {:.0} ms)",
        if interrupted { "partial result stored" } else { "stored" },
        s.intervals,
        s.batches,
        s.puts,
        s.bytes as f64 / 1024.0,
        s.max_put_seconds * 1000.0
    )
    }
}
