//! `loadlab run … --results URL`: the run's record goes to object storage while it runs
//! (no local run store: a pod has nowhere to keep one). A segment first meets the others at
//! the start barrier under the URL, unless `--start-at` fixed the start already.

use super::measure::{check_json_path, execute, write_json, Share};
use super::run::outcome_of;
use crate::cli::OutputArgs;
use crate::exit::{CliError, Outcome};
use loadlab_engine::Cancel;
use loadlab_metrics::record::RecordSink;
use loadlab_metrics::result::SegmentId;
use loadlab_metrics::RunResult;
use loadlab_remote::{Barrier, BarrierOptions, Remote, RunLayout, UploadSink, UploadStats};
use loadlab_report::Style;
use loadlab_scenario::units::parse_duration;
use loadlab_scenario::{Scenario, ScenarioError};
use std::io::{IsTerminal, Write};
use std::time::Duration;
use url::Url;

/// The object-storage URL a results location names (`None`: a local directory).
pub fn url_of(results: &std::path::Path) -> Result<Option<Url>, CliError> {
    match loadlab_remote::parse_location(&results.to_string_lossy())? {
        loadlab_remote::ResultsLocation::Url(u) => Ok(Some(u)),
        loadlab_remote::ResultsLocation::Dir(_) => Ok(None),
    }
}

/// `--barrier-timeout` and `--upload-every`, parsed.
#[derive(Debug, Clone, Copy)]
pub struct RemoteRunOptions {
    pub barrier_timeout: Duration,
    pub upload_every: Duration,
}

impl RemoteRunOptions {
    pub fn parse(
        barrier_timeout: Option<&str>,
        upload_every: Option<&str>,
    ) -> Result<Self, CliError> {
        let flag = |name: &'static str, text: Option<&str>, default: Duration| {
            text.map(|t| parse_duration(t).map_err(|m| ScenarioError::flag(name, m, None)))
                .transpose()
                .map(|d| d.unwrap_or(default))
        };
        let upload_every = flag("--upload-every", upload_every, Duration::from_secs(5))?;
        if upload_every < Duration::from_millis(200) {
            return Err(CliError::bad_input(
                "--upload-every: give at least 200ms (every upload is two object-store requests)",
            ));
        }
        Ok(Self {
            barrier_timeout: flag(
                "--barrier-timeout",
                barrier_timeout,
                Duration::from_secs(300),
            )?,
            upload_every,
        })
    }
}

/// Runs `scenario` (this process's share of it) with its record streamed to `url`.
pub fn run(
    scenario: &Scenario,
    output: &OutputArgs,
    mut share: Share,
    url: &Url,
    options: RemoteRunOptions,
) -> Result<(Outcome, RunResult), CliError> {
    if let Some(json) = &output.json {
        check_json_path(json)?;
    }
    let run = Remote::open(url)?;
    let segment = share.segment.map(|s| SegmentId {
        index: s.index,
        count: s.count,
    });
    let layout = RunLayout { segment };
    let record = run.at(&layout.record_dir());
    let mut clock = None;
    match (segment, share.start_at) {
        (Some(seg), None) => {
            let barrier = BarrierOptions {
                timeout: options.barrier_timeout,
                ..BarrierOptions::default()
            };
            let quiet = output.quiet;
            let met = Barrier::new(&run, seg, &scenario.fingerprint(), barrier).meet(&mut |m| {
                if !quiet {
                    eprintln!("{m}");
                }
            })?;
            share.start_at = Some(met.start);
            clock = met.clock;
        }
        _ => {
            if record.head(loadlab_metrics::record::META_FILE)?.is_some() {
                return Err(CliError::bad_input(format!(
                    "{} already holds a run record: give each run its own --results prefix",
                    record.url()
                )));
            }
        }
    }
    let sink = UploadSink::start(&record, options.upload_every, clock)?;
    let stats = sink.stats_handle();
    let cancel = Cancel::new();
    crate::signals::watch(cancel.clone());
    let (result, storage_error) = execute(
        scenario,
        output,
        &cancel,
        share,
        Some(Box::new(sink) as Box<dyn RecordSink>),
        record.url(),
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
    if let Some(path) = &output.json {
        if let Err(e) = write_json(&result, path) {
            errors.push(e);
        }
    }
    if !output.quiet {
        let mut stdout = std::io::stdout().lock();
        let style = Style {
            color: std::io::stdout().is_terminal(),
        };
        let _ = loadlab_report::render_summary(&result, &mut stdout, style);
        let _ = writeln!(
            stdout,
            "\n{}",
            stored_line(record.url(), &stats(), result.interrupted)
        );
        let _ = stdout.flush();
    }
    for e in &errors {
        eprintln!("error: {e}");
    }
    if !errors.is_empty() {
        return Ok((Outcome::Invalid, result));
    }
    Ok((outcome_of(&result, output.allow_saturated), result))
}

/// `stored in s3://… (12 uploads of 6 intervals, 41 KiB, 9 ms per upload)`.
fn stored_line(url: &str, s: &UploadStats, interrupted: bool) -> String {
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
