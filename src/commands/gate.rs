//! `loadlab gate NAME`: for CI. The newest run or study of a history against the last stable
//! segment before it (`loadlab_analysis::history::stable_segment_start`), with compare's
//! statistics (Mann–Whitney or the one-run prediction test, Holm, the gate on the 95% CI,
//! the equivalence band); exit 1 only on a significant regression beyond the margin. Prints
//! the comparison and writes a Markdown summary for the CI's step summary.

use super::compare::{compare_sides, parse_percent, Side};
use super::history::{
    check_since, chosen_metrics, detector_params, load_points, no_points, Loaded,
};
use crate::cli::GateArgs;
use crate::exit::{CliError, Outcome};
use loadlab_analysis::change_points::ChangePointParams;
use loadlab_analysis::compare::{CompareOptions, ALPHA, MIN_RUNS_FOR_COMPARISON};
use loadlab_analysis::history::{stable_segment_start, PointKind};
use loadlab_analysis::study::{summarize_variant, RunSample};
use loadlab_metrics::{MetricId, RunResult};
use loadlab_report::gate_summary::{gate_markdown, GateContext};
use loadlab_report::junit::{comparison_cases, junit_xml};
use loadlab_report::study_terminal::print_gate;
use loadlab_store::{Labels, Store};
use std::io::Write;

pub fn execute(args: GateArgs) -> Result<Outcome, CliError> {
    let params = detector_params(&args.detector)?;
    let bound = parse_percent("--fail-on-regression", &args.fail_on_regression)?;
    let equivalence = args
        .equivalence
        .as_deref()
        .map(|t| parse_percent("--equivalence", t))
        .transpose()?
        .unwrap_or(0.0);
    let s = &args.series;
    let since = s.since.as_deref().map(check_since).transpose()?;
    let store = super::store::open(&loadlab_store::resolve_dir(s.results.as_deref()))?;
    let filter: Labels = s.labels.iter().cloned().collect();
    let loaded = load_points(&store, &s.name, &filter, s.runs, since)?;
    if loaded.points.is_empty() {
        return Err(no_points(
            &store,
            &s.name,
            !filter.is_empty() || since.is_some(),
        ));
    }
    let metrics = chosen_metrics(&s.metrics, &loaded.points)?;
    let newest = loaded.points.len() - 1;
    let (same_plan, start) = stable_segment(&loaded, &metrics, &params, &s.name)?;
    let segment = &same_plan[start..same_plan.len() - 1];
    let newest_kind = match loaded.kind {
        PointKind::Run => "run",
        PointKind::Study => "study",
    };
    let history_side = side(
        &store,
        &loaded,
        segment,
        ("history", "history"),
        equivalence,
    )?;
    let newest_side = side(
        &store,
        &loaded,
        &[newest],
        (newest_kind, "newest"),
        equivalence,
    )?;
    let options = CompareOptions {
        alpha: ALPHA,
        equivalence,
        min_runs: MIN_RUNS_FOR_COMPARISON,
    };
    let newest_words = point_words(&loaded, newest);
    let baseline_words = format!(
        "points #{}–#{} of its history ({} to {}), {} run(s)",
        start,
        same_plan.len() - 2,
        point_words(&loaded, segment[0]),
        point_words(
            &loaded,
            *segment.last().expect("a segment of one point at least")
        ),
        history_side.stats.runs.len()
    );
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "gate {}: {newest_words} against {baseline_words}",
        s.name
    );
    let result = compare_sides(
        &[(&history_side, &newest_side)],
        &metrics,
        &options,
        Some(bound),
        Some(&mut out),
    )
    .result;
    for w in &result.warnings {
        let _ = writeln!(out, "warning: {}", w.replace('`', ""));
    }
    let _ = print_gate(&mut out, &result);
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&result).expect("serializes") + "\n";
        super::output::write_json_copy(path, &text)?;
    }
    let summary = gate_markdown(
        &GateContext {
            name: &s.name,
            newest: &newest_words,
            baseline: &baseline_words,
        },
        &result,
    );
    super::output::write_summary(args.summary.as_deref(), true, &summary)?;
    if let Some(path) = &args.junit {
        let cases = comparison_cases(&result);
        let suite = format!("gate {}", s.name);
        super::output::write_junit(path, &junit_xml(&suite, "loadlab.gate", &cases))?;
    }
    Ok(if result.regressions.is_empty() {
        Outcome::Ok
    } else {
        Outcome::ThresholdsFailed
    })
}

/// The points of the newest point's plan that have every gated metric (earlier plans
/// measured something else), and where the last stable segment before the newest starts
/// among them.
fn stable_segment(
    loaded: &Loaded,
    metrics: &[MetricId],
    params: &ChangePointParams,
    name: &str,
) -> Result<(Vec<usize>, usize), CliError> {
    let newest = loaded.points.len() - 1;
    let plan = &loaded.points[newest].plan;
    let same_plan: Vec<usize> = (0..loaded.points.len())
        .filter(|&i| &loaded.points[i].plan == plan)
        .filter(|&i| {
            metrics
                .iter()
                .all(|m| loaded.points[i].values.contains_key(m))
        })
        .collect();
    if same_plan.len() < 2 || same_plan.last() != Some(&newest) {
        return Err(CliError::bad_input(format!(
            "gate {name}: the newest point ({}) has no earlier point of the same plan and metrics to compare with; run it again after the next run or study",
            loaded.points[newest].id
        )));
    }
    let series: Vec<Vec<f64>> = metrics
        .iter()
        .map(|m| {
            same_plan
                .iter()
                .map(|&i| loaded.points[i].values[m].value)
                .collect()
        })
        .collect();
    let start = stable_segment_start(&series, params)
        .map_err(|e| CliError::bad_input(format!("gate {name}: {e}")))?;
    Ok((same_plan, start))
}

/// `study s2026… (commit=abc123)`.
fn point_words(loaded: &Loaded, index: usize) -> String {
    let p = &loaded.points[index];
    let kind = match p.kind {
        PointKind::Run => "run",
        PointKind::Study => "study",
    };
    let labels: Vec<String> = p.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if labels.is_empty() {
        format!("{kind} {}", p.id)
    } else {
        format!("{kind} {} ({})", p.id, labels.join(", "))
    }
}

/// One side of the comparison: every run behind the given points, one observation each.
fn side(
    store: &Store,
    loaded: &Loaded,
    points: &[usize],
    (kind, label): (&'static str, &str),
    equivalence: f64,
) -> Result<Side, CliError> {
    let mut results: Vec<(String, RunResult)> = Vec::new();
    for &i in points {
        for id in &loaded.runs[i] {
            let (_, result) = store.load_run(id).map_err(CliError::bad_input)?;
            results.push((id.clone(), result));
        }
    }
    let samples: Vec<RunSample<'_>> = results
        .iter()
        .map(|(id, result)| RunSample {
            id: id.clone(),
            result,
            excluded: false,
        })
        .collect();
    Ok(Side {
        kind,
        id: loaded.points[points[0]].id.clone(),
        stats: summarize_variant(label, &samples),
        equivalence,
    })
}
