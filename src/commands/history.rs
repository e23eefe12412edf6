//! `loadlab history NAME`: reads a scenario's runs (or a study's studies) from the store,
//! hands them to `loadlab_analysis::history`, prints the table and change points, and writes
//! the `loadlab.history.v1` JSON. Flag parsing and printing only.

use crate::cli::{DetectorArgs, HistoryArgs};
use crate::exit::{CliError, Outcome};
use loadlab_analysis::change_points::ChangePointParams;
use loadlab_analysis::history::{build_history, History, HistoryPoint, PointKind, PointValue};
use loadlab_analysis::study::{default_compare_metrics, run_metrics, StudyResult};
use loadlab_metrics::MetricId;
use loadlab_report::verdict_words::format_value;
use loadlab_store::{Labels, Store};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

pub fn execute(history_args: HistoryArgs) -> Result<Outcome, CliError> {
    let params = detector_params(&history_args.detector)?;
    let args = &history_args.series;
    let since = args.since.as_deref().map(check_since).transpose()?;
    let store = super::store::open(&loadlab_store::resolve_dir(args.results.as_deref()))?;
    let filter: Labels = args.labels.iter().cloned().collect();
    let Loaded {
        kind,
        points,
        skipped,
        ..
    } = load_points(&store, &args.name, &filter, args.runs, since)?;
    if points.is_empty() {
        return Err(no_points(
            &store,
            &args.name,
            !filter.is_empty() || since.is_some(),
        ));
    }
    let metrics = chosen_metrics(&args.metrics, &points)?;
    let history = build_history(&args.name, kind, &points, &metrics, &params)
        .map_err(|e| CliError::bad_input(format!("history of {}: {e}", args.name)))?;
    if let Some(path) = &history_args.json {
        let text = serde_json::to_string_pretty(&history).expect("history serializes") + "\n";
        super::output::write_json_copy(path, &text)?;
    }
    let mut out = std::io::stdout().lock();
    print_history(&mut out, &history, &points, skipped);
    if let Some(html) = &history_args.report {
        write_trend_report(html, &history)?;
        super::output::print_report_paths(&mut out, html);
    }
    Ok(Outcome::Ok)
}

/// The HTML trend report at `html`, the Markdown beside it (`.md`) and its charts as
/// `<stem>-<chart id>.svg`.
fn write_trend_report(html: &Path, history: &History) -> Result<(), CliError> {
    use loadlab_report::history_report::{history_charts, history_html, history_markdown};
    let fail = |path: &Path, e: std::io::Error| {
        CliError::bad_input(format!("--report: cannot write {}: {e}", path.display()))
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

pub(super) fn detector_params(args: &DetectorArgs) -> Result<ChangePointParams, CliError> {
    if !(args.p_value > 0.0 && args.p_value <= 1.0) {
        return Err(CliError::bad_input(format!(
            "--p-value {}: give a probability in (0, 1], e.g. 0.001",
            args.p_value
        )));
    }
    if args.window < 2 {
        return Err(CliError::bad_input(
            "--window: give at least 2 points (Otava's default is 50)",
        ));
    }
    let min_magnitude = match &args.min_magnitude {
        Some(text) => super::compare::parse_percent("--min-magnitude", text)?,
        None => 0.0,
    };
    Ok(ChangePointParams {
        max_p_value: args.p_value,
        window: args.window,
        min_magnitude,
    })
}

/// `--since`: a date `YYYY-MM-DD` or an RFC 3339 time; compared with the stored start times
/// (RFC 3339, UTC) as text, which orders them by time.
pub(super) fn check_since(text: &str) -> Result<&str, CliError> {
    let b = text.as_bytes();
    let date_like = b.len() >= 10
        && b[..10].iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        });
    if date_like {
        Ok(text)
    } else {
        Err(CliError::bad_input(format!(
            "--since {text}: give a date (2026-11-01) or a UTC time (2026-11-01T12:00:00Z)"
        )))
    }
}

/// A history's points as read from the store.
pub(super) struct Loaded {
    pub kind: PointKind,
    pub points: Vec<HistoryPoint>,
    /// The runs behind each point (the run itself, or the study's first variant's runs).
    pub runs: Vec<Vec<String>>,
    /// Runs left out as invalid or partial.
    pub skipped: usize,
}

/// The points of `name`: its studies (medians of their first variant) when there are any and
/// `--runs` is not given, else its valid single runs; then `--since`.
pub(super) fn load_points(
    store: &Store,
    name: &str,
    filter: &Labels,
    runs_only: bool,
    since: Option<&str>,
) -> Result<Loaded, CliError> {
    let mut loaded = read_points(store, name, filter, runs_only)?;
    if let Some(since) = since {
        let keep: Vec<bool> = loaded
            .points
            .iter()
            .map(|p| p.started_at.as_str() >= since)
            .collect();
        let mut flags = keep.iter();
        loaded.points.retain(|_| *flags.next().unwrap());
        let mut flags = keep.iter();
        loaded.runs.retain(|_| *flags.next().unwrap());
    }
    Ok(loaded)
}

fn read_points(
    store: &Store,
    name: &str,
    filter: &Labels,
    runs_only: bool,
) -> Result<Loaded, CliError> {
    let studies = store
        .history_studies(name, filter)
        .map_err(CliError::bad_input)?;
    if !runs_only && !studies.is_empty() {
        let mut points = Vec::new();
        let mut runs = Vec::new();
        for s in studies {
            let path = s.path.clone().expect("history studies have a file");
            let text = std::fs::read_to_string(&path)
                .map_err(|e| CliError::bad_input(format!("cannot read {}: {e}", path.display())))?;
            let study: StudyResult = serde_json::from_str(&text).map_err(|e| {
                CliError::bad_input(format!("{}: not a loadlab study: {e}", path.display()))
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
        });
    }
    let mut points = Vec::new();
    let mut runs = Vec::new();
    let mut skipped = 0;
    for rec in store
        .history_runs(name, filter)
        .map_err(CliError::bad_input)?
    {
        if rec.valid != Some(true) || rec.partial {
            skipped += 1;
            continue;
        }
        let (rec, result) = store.load_run(&rec.id).map_err(CliError::bad_input)?;
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
    })
}

/// Exit 2 naming what the store has.
pub(super) fn no_points(store: &Store, name: &str, filtered: bool) -> CliError {
    if filtered {
        return CliError::bad_input(format!(
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
            .filter(|s| s.kind == "study")
            .map(|s| s.name),
    );
    names.sort();
    names.dedup();
    CliError::bad_input(format!(
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
pub(super) fn chosen_metrics(
    names: &[String],
    points: &[HistoryPoint],
) -> Result<Vec<MetricId>, CliError> {
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
                CliError::bad_input(format!(
                    "--metric {name}: {e}\n  valid metrics:\n{}",
                    super::compare::valid_metric_names(&measured)
                ))
            })?;
            if measured.contains(&id) {
                Ok(id)
            } else {
                Err(CliError::bad_input(format!(
                    "--metric {name}: the runs did not measure it\n  valid metrics:\n{}",
                    super::compare::valid_metric_names(&measured)
                )))
            }
        })
        .collect()
}

/// `commit=abc123` (the label a CI sets), else every label.
fn label_text(labels: &BTreeMap<String, String>) -> String {
    if let Some(commit) = labels.get("commit") {
        return commit.chars().take(12).collect();
    }
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn print_history(out: &mut impl Write, h: &History, points: &[HistoryPoint], skipped: usize) {
    let what = match h.kind {
        PointKind::Run => "runs",
        PointKind::Study => "studies (median of the first variant, 95% CI)",
    };
    let _ = writeln!(
        out,
        "history of {}: {} {what}; change points by E-divisive means (p < {}, window {}, min magnitude {:.1}%)",
        h.name,
        points.len(),
        h.detector.max_p_value,
        h.detector.window,
        h.detector.min_magnitude * 100.0
    );
    if skipped > 0 {
        let _ = writeln!(out, "({skipped} invalid or partial run(s) left out)");
    }
    let mut plans: Vec<&Option<String>> = Vec::new();
    for s in &h.series {
        if !plans.contains(&&s.plan) {
            plans.push(&s.plan);
        }
    }
    for plan in plans {
        print_plan_table(out, h, plan);
    }
    if h.change_points.is_empty() {
        let _ = writeln!(out, "\nno change point");
        return;
    }
    let _ = writeln!(out, "\nchange points:");
    for cp in &h.change_points {
        let ci = cp
            .change_ci
            .map(|[lo, hi]| format!(" [{:+.1}%, {:+.1}%]", lo * 100.0, hi * 100.0))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {} at #{} ({} {}; before: {} {}): {:+.1}%{ci} {} (p {:.1e})",
            cp.metric.label(),
            cp.index,
            cp.run_id,
            label_text(&cp.labels),
            cp.before_id,
            label_text(&cp.before_labels),
            cp.change * 100.0,
            cp.verdict.as_str(),
            cp.p_value
        );
    }
}

/// One table per plan: a row per point, a column per metric, `◆` where a series changes.
fn print_plan_table(out: &mut impl Write, h: &History, plan: &Option<String>) {
    let series: Vec<_> = h.series.iter().filter(|s| &s.plan == plan).collect();
    let Some(longest) = series.iter().map(|s| s.points.len()).max() else {
        return;
    };
    let plan_text = plan.as_deref().map_or("(none)", |p| &p[..p.len().min(12)]);
    let _ = writeln!(out, "\nplan {plan_text}");
    let _ = write!(out, "{:>4}  {:<20} {:<12}", "#", "started", "label");
    for s in &series {
        let _ = write!(out, " {:>16}", s.metric.to_string());
    }
    let _ = writeln!(out);
    let first = series
        .iter()
        .max_by_key(|s| s.points.len())
        .expect("a series");
    for i in 0..longest {
        let p = &first.points[i];
        let started: String = p.started_at.chars().take(19).collect();
        let _ = write!(
            out,
            "{:>4}  {:<20} {:<12}",
            i,
            started.replace('T', " "),
            label_text(&p.labels)
        );
        for s in &series {
            let cell = s.points.get(i).map_or(String::new(), |p| {
                let changed = h
                    .change_points
                    .iter()
                    .any(|c| c.metric == s.metric && &c.plan == plan && c.index == i);
                format!(
                    "{}{}",
                    if changed { "◆ " } else { "" },
                    format_value(s.metric.unit(), p.value)
                )
            });
            let _ = write!(out, " {cell:>16}");
        }
        let _ = writeln!(out);
    }
}
