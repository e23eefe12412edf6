//! Performance over time: a scenario's stored runs (or a study's medians) as a history
//! with change points (`loadlab_analysis::history`), its trend report, and the sides
//! `loadlab gate` compares — the newest point against the last stable segment before it.
//! The table printed in the terminal is `loadlab_report::history_terminal`'s; the gate's
//! sides and the detector's settings are [`gate`]'s.

mod gate;
pub use gate::{
    detector_params, gate_detector_params, gate_sides, point_words, side, stable_segment, GateSides,
};

use crate::PipelineError;
use loadlab_analysis::history::{History, HistoryPoint, PointKind, PointValue};
use loadlab_analysis::study::{default_compare_metrics, run_metrics, StudyResult};
use loadlab_metrics::{MetricId, RunResult};
use loadlab_remote::{
    find_runs, segment_dir, Remote, LABELS_FILE, MERGED, SUMMARY_FILE, WHOLE_RUN,
};
use loadlab_store::{labels_match, Labels, Store, StudyKind};
use std::collections::BTreeMap;
use std::path::Path;

/// `--since`: a date `YYYY-MM-DD` or an RFC 3339 time; compared with the stored start times
/// (RFC 3339, UTC) as text, which orders them by time.
pub fn check_since(text: &str) -> Result<&str, PipelineError> {
    use loadlab_metrics::result::parse_rfc3339;
    // A date is a time at its midnight; `2026-13-45` is neither (it matched every run as
    // text before any real date, and said nothing).
    let readable = if text.len() == 10 {
        parse_rfc3339(&format!("{text}T00:00:00Z")).is_some()
    } else {
        parse_rfc3339(text).is_some()
    };
    if readable {
        Ok(text)
    } else {
        Err(PipelineError::bad_input(format!(
            "--since {text}: give a date (2026-11-01) or a UTC time (2026-11-01T12:00:00Z)"
        )))
    }
}

/// A history's points as read from the store.
pub struct Loaded {
    pub kind: PointKind,
    pub points: Vec<HistoryPoint>,
    /// The runs behind each point (the run itself, or the study's first variant's runs).
    pub runs: Vec<Vec<String>>,
    /// Runs left out as invalid or partial.
    pub skipped: usize,
    /// Run summaries already read (those of object storage, which has no index to read
    /// them from again), by id.
    pub results: BTreeMap<String, RunResult>,
}

/// The points of `name`: its studies (medians of their first variant) when there are any and
/// `--runs` is not given, else its valid single runs; then `--since`.
pub fn load_points(
    store: &Store,
    name: &str,
    filter: &Labels,
    runs_only: bool,
    since: Option<&str>,
    warn: &mut dyn FnMut(&str),
) -> Result<Loaded, PipelineError> {
    let mut loaded = read_points(store, name, filter, runs_only, warn)?;
    loaded.keep_since(since);
    Ok(loaded)
}

impl Loaded {
    /// Leaves out the points that started before `since`.
    fn keep_since(&mut self, since: Option<&str>) {
        let Some(since) = since else {
            return;
        };
        let keep: Vec<bool> = self
            .points
            .iter()
            .map(|p| p.started_at.as_str() >= since)
            .collect();
        let mut flags = keep.iter();
        self.points.retain(|_| *flags.next().unwrap());
        let mut flags = keep.iter();
        self.runs.retain(|_| *flags.next().unwrap());
    }
}

/// The series `history` and `gate` read.
pub struct SeriesQuery<'a> {
    /// The scenario's (or study's) name.
    pub name: &'a str,
    /// Only points with these labels.
    pub labels: Labels,
    /// Only points started at or after this date or time.
    pub since: Option<&'a str>,
    /// Single runs even where studies exist.
    pub runs_only: bool,
}

/// The points of a series in the results location (a local store, or object storage, which
/// has no store: `None`); exit 2 naming what there is when there are none.
pub fn load_series(
    results: Option<&Path>,
    query: &SeriesQuery<'_>,
    warn: &mut dyn FnMut(&str),
) -> Result<(Option<Store>, Loaded), PipelineError> {
    let filtered = !query.labels.is_empty() || query.since.is_some();
    let dir = loadlab_store::resolve_dir(results);
    if let Some(url) = crate::remote::url_of(&dir)? {
        let remote = Remote::open(&url)?;
        let loaded = load_remote_points(&remote, query.name, &query.labels, query.since)?;
        if loaded.points.is_empty() {
            return Err(no_remote_points(&url, query.name, filtered));
        }
        return Ok((None, loaded));
    }
    let store = crate::store::open(&dir, warn)?;
    let loaded = load_points(
        &store,
        query.name,
        &query.labels,
        query.runs_only,
        query.since,
        warn,
    )?;
    if loaded.points.is_empty() {
        return Err(no_points(&store, query.name, filtered));
    }
    Ok((Some(store), loaded))
}

/// The points of `name` among the runs in object storage under `remote`: each whole run's
/// summary, or a split run's merged one (segments not merged yet are counted as skipped, as
/// invalid and interrupted runs are), oldest first; then `--label` and `--since`.
pub fn load_remote_points(
    remote: &Remote,
    name: &str,
    filter: &Labels,
    since: Option<&str>,
) -> Result<Loaded, PipelineError> {
    let mut found: Vec<(HistoryPoint, RunResult)> = Vec::new();
    let mut skipped = 0;
    for listing in find_runs(remote)? {
        if listing.name.as_deref() != Some(name) {
            continue;
        }
        let run = if listing.prefix.is_empty() {
            remote.at("")
        } else {
            remote.at(&listing.prefix)
        };
        let record = match (listing.merged, listing.count) {
            (true, _) => run.at(MERGED),
            (false, None) => run.at(WHOLE_RUN),
            (false, Some(_)) => {
                skipped += 1;
                continue;
            }
        };
        let Some(bytes) = record.get(SUMMARY_FILE)? else {
            skipped += 1;
            continue;
        };
        let result = RunResult::from_json(&String::from_utf8_lossy(&bytes)).map_err(|e| {
            PipelineError::bad_input(format!(
                "{}/{SUMMARY_FILE}: not a run result: {e}",
                record.url()
            ))
        })?;
        if !result.usable() || result.interrupted {
            skipped += 1;
            continue;
        }
        let labels = remote_labels(&run, &record)?;
        if !labels_match(&labels, filter) {
            continue;
        }
        let values = run_metrics(&result)
            .into_iter()
            .map(|(id, value)| (id, PointValue { value, ci: None }))
            .collect();
        let point = HistoryPoint {
            id: listing.url.clone(),
            kind: PointKind::Run,
            started_at: result.started_at.clone(),
            labels,
            plan: result.plan_hash.clone(),
            values,
        };
        found.push((point, result));
    }
    found.sort_by(|a, b| a.0.started_at.cmp(&b.0.started_at));
    let mut loaded = Loaded {
        kind: PointKind::Run,
        points: Vec::new(),
        runs: Vec::new(),
        skipped,
        results: BTreeMap::new(),
    };
    for (point, result) in found {
        loaded.runs.push(vec![point.id.clone()]);
        loaded.results.insert(point.id.clone(), result);
        loaded.points.push(point);
    }
    loaded.keep_since(since);
    Ok(loaded)
}

/// A distributed run's labels: beside its record, else beside its first segment's.
fn remote_labels(run: &Remote, record: &Remote) -> Result<Labels, PipelineError> {
    let bytes = match record.get(LABELS_FILE)? {
        Some(b) => Some(b),
        None => run.at(&segment_dir(0)).get(LABELS_FILE)?,
    };
    Ok(bytes
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default())
}

fn read_points(
    store: &Store,
    name: &str,
    filter: &Labels,
    runs_only: bool,
    warn: &mut dyn FnMut(&str),
) -> Result<Loaded, PipelineError> {
    let studies = store.history_studies(name, filter)?;
    if !runs_only && !studies.is_empty() {
        let mut points = Vec::new();
        let mut runs = Vec::new();
        for s in studies {
            let path = s.path.clone().expect("history studies have a file");
            let text = std::fs::read_to_string(&path).map_err(|e| {
                PipelineError::bad_input(format!("cannot read {}: {e}", path.display()))
            })?;
            let study: StudyResult = serde_json::from_str(&text).map_err(|e| {
                PipelineError::bad_input(format!("{}: not a loadlab study: {e}", path.display()))
            })?;
            let Some(variant) = study.variants.first() else {
                continue;
            };
            let values = variant
                .metrics
                .iter()
                .map(|(id, m)| {
                    let ci = m.median_ci;
                    (
                        id.clone(),
                        PointValue {
                            value: m.median,
                            ci,
                        },
                    )
                })
                .collect();
            runs.push(variant.runs.clone());
            points.push(HistoryPoint {
                id: s.id,
                kind: PointKind::Study,
                started_at: s.started_at,
                labels: s.labels,
                plan: s.plan_hash,
                values,
            });
        }
        return Ok(Loaded {
            kind: PointKind::Study,
            points,
            runs,
            skipped: 0,
            results: BTreeMap::new(),
        });
    }
    let mut points = Vec::new();
    let mut runs = Vec::new();
    let mut skipped = 0;
    for rec in store.history_runs(name, filter)? {
        // `valid` is unset for imported runs: not judged, nothing known against them.
        if rec.valid == Some(false) || rec.partial {
            skipped += 1;
            continue;
        }
        let (rec, result) = crate::store::load_run(store, &rec.id, warn)?;
        let values = run_metrics(&result)
            .into_iter()
            .map(|(id, value)| (id, PointValue { value, ci: None }))
            .collect();
        runs.push(vec![rec.id.clone()]);
        points.push(HistoryPoint {
            id: rec.id,
            kind: PointKind::Run,
            started_at: rec.started_at,
            labels: rec.labels,
            plan: rec.plan_hash,
            values,
        });
    }
    Ok(Loaded {
        kind: PointKind::Run,
        points,
        runs,
        skipped,
        results: BTreeMap::new(),
    })
}

/// Exit 2 for object storage, where no run of that name was found.
pub fn no_remote_points(url: &url::Url, name: &str, filtered: bool) -> PipelineError {
    PipelineError::bad_input(if filtered {
        format!("history {name}: no valid run under {url} matches --label/--since (drop them to see all)")
    } else {
        format!("history {name}: no valid whole or merged run of that name under {url} (`loadlab runs --results {url}` lists them; merge split runs first)")
    })
}

/// Exit 2 naming what the store has.
pub fn no_points(store: &Store, name: &str, filtered: bool) -> PipelineError {
    if filtered {
        return PipelineError::bad_input(format!(
            "history {name}: no valid run or study matches --label/--since (drop them to see all)"
        ));
    }
    let mut names: Vec<String> = store
        .runs(10_000)
        .map(|(runs, _)| runs.into_iter().map(|r| r.scenario).collect())
        .unwrap_or_default();
    names.extend(
        store
            .studies(10_000)
            .unwrap_or_default()
            .into_iter()
            .filter(|s| s.kind == StudyKind::Study)
            .map(|s| s.name),
    );
    names.sort();
    names.dedup();
    PipelineError::bad_input(format!(
        "history {name}: no valid run or study of that name in {}\n  names in the store: {}",
        store.dir().display(),
        if names.is_empty() {
            "(none)".to_string()
        } else {
            names.join(", ")
        }
    ))
}

/// `--metric` names, checked against what the points measured; the default set otherwise
/// (keeping those the points have).
pub fn chosen_metrics(
    names: &[String],
    points: &[HistoryPoint],
) -> Result<Vec<MetricId>, PipelineError> {
    let mut measured: Vec<MetricId> = points
        .iter()
        .flat_map(|p| p.values.keys().cloned())
        .collect();
    measured.sort();
    measured.dedup();
    if names.is_empty() {
        return Ok(default_compare_metrics()
            .into_iter()
            .filter(|m| measured.contains(m))
            .collect());
    }
    names
        .iter()
        .map(|name| {
            let id: MetricId = name.parse().map_err(|e| {
                PipelineError::bad_input(format!(
                    "--metric {name}: {e}\n  valid metrics:\n{}",
                    crate::compare::valid_metric_names(&measured)
                ))
            })?;
            if measured.contains(&id) {
                Ok(id)
            } else {
                Err(PipelineError::bad_input(format!(
                    "--metric {name}: the runs did not measure it\n  valid metrics:\n{}",
                    crate::compare::valid_metric_names(&measured)
                )))
            }
        })
        .collect()
}

/// The HTML trend report at `html`, the Markdown beside it (`.md`) and its charts as
/// `<stem>-<chart id>.svg`.
pub fn write_trend_report(html: &Path, history: &History) -> Result<(), PipelineError> {
    use loadlab_report::history_report::{history_charts, history_html, history_markdown};
    let fail = |path: &Path, e: std::io::Error| {
        PipelineError::bad_input(format!("--report: cannot write {}: {e}", path.display()))
    };
    if let Some(dir) = html.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| fail(dir, e))?;
    }
    std::fs::write(html, history_html(history)).map_err(|e| fail(html, e))?;
    let stem = html
        .file_stem()
        .map_or("history".into(), |s| s.to_string_lossy().to_string());
    let svg_name = |id: &str| format!("{stem}-{id}.svg");
    for chart in history_charts(history) {
        let path = html.with_file_name(svg_name(&chart.id));
        std::fs::write(&path, loadlab_report::svg::render_svg(&chart))
            .map_err(|e| fail(&path, e))?;
    }
    let md = html.with_extension("md");
    std::fs::write(&md, history_markdown(history, |c| svg_name(&c.id))).map_err(|e| fail(&md, e))
}

#[cfg(test)]
mod tests {
    #[test]
    fn since_is_a_real_date_or_utc_time() {
        for good in [
            "2026-11-01",
            "2026-11-01T12:00:00Z",
            "2026-02-28T23:59:59.5Z",
        ] {
            assert_eq!(super::check_since(good).ok(), Some(good), "{good}");
        }
        for bad in [
            "2026-13-45",
            "2026-11-01T25:00:00Z",
            "yesterday",
            "2026-11",
            "",
        ] {
            assert!(super::check_since(bad).is_err(), "{bad}");
        }
    }
}
