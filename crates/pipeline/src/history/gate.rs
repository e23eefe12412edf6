//! What `loadlab gate` compares: the newest point of a history against the last stable
//! segment before it, with the change-point detector's settings checked (`history` uses them
//! too); kept apart from loading the points so each file has one purpose.

use super::Loaded;
use crate::compare::{Side, SideKind};
use crate::PipelineError;
use loadlab_analysis::change_points::ChangePointParams;
use loadlab_analysis::history::{stable_segment_start, PointKind};
use loadlab_analysis::study::{summarize_variant, RunSample};
use loadlab_metrics::{MetricId, RunResult};
use loadlab_store::Store;

/// The points of the newest point's plan that have every gated metric (earlier plans
/// measured something else), and where the last stable segment before the newest starts
/// among them.
pub fn stable_segment(
    loaded: &Loaded,
    metrics: &[MetricId],
    params: &ChangePointParams,
    name: &str,
) -> Result<(Vec<usize>, usize), PipelineError> {
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
        return Err(PipelineError::bad_input(format!(
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
        .map_err(|e| PipelineError::bad_input(format!("gate {name}: {e}")))?;
    Ok((same_plan, start))
}

/// `study s2026… (commit=abc123)`.
pub fn point_words(loaded: &Loaded, index: usize) -> String {
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
pub fn side(
    store: Option<&Store>,
    loaded: &Loaded,
    points: &[usize],
    (kind, label): (SideKind, &str),
    equivalence: f64,
    warn: &mut dyn FnMut(&str),
) -> Result<Side, PipelineError> {
    let mut results: Vec<(String, RunResult)> = Vec::new();
    for &i in points {
        for id in &loaded.runs[i] {
            let result = match (loaded.results.get(id), store) {
                (Some(result), _) => result.clone(),
                (None, Some(store)) => crate::store::load_run(store, id, warn)?.1,
                (None, None) => {
                    return Err(PipelineError::aborted(format!("run {id}: no summary read")))
                }
            };
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
        made_by: None,
    })
}

/// What `loadlab gate` compares: the runs of the last stable segment before the newest point
/// (`history`) and those of the newest point, with both described in words.
pub struct GateSides {
    pub history: Side,
    pub newest: Side,
    /// `study s2026… (commit=abc123)`.
    pub newest_words: String,
    /// `points #3–#9 of its history (… to …), 21 run(s)`.
    pub baseline_words: String,
}

/// The sides of the gate over `loaded`, the last stable segment found with `params` on
/// `metrics`.
pub fn gate_sides(
    store: Option<&Store>,
    loaded: &Loaded,
    metrics: &[MetricId],
    params: &ChangePointParams,
    name: &str,
    equivalence: f64,
    warn: &mut dyn FnMut(&str),
) -> Result<GateSides, PipelineError> {
    let newest = loaded.points.len() - 1;
    let (same_plan, start) = stable_segment(loaded, metrics, params, name)?;
    let segment = &same_plan[start..same_plan.len() - 1];
    let newest_kind = match loaded.kind {
        PointKind::Run => SideKind::Run,
        PointKind::Study => SideKind::Study,
    };
    let history = side(
        store,
        loaded,
        segment,
        (SideKind::History, "history"),
        equivalence,
        warn,
    )?;
    let newest_side = side(
        store,
        loaded,
        &[newest],
        (newest_kind, "newest"),
        equivalence,
        warn,
    )?;
    let last = *segment.last().expect("a segment of one point at least");
    let baseline_words = format!(
        "points #{}–#{} of its history ({} to {}), {} run(s)",
        start,
        same_plan.len() - 2,
        point_words(loaded, segment[0]),
        point_words(loaded, last),
        history.stats.runs.len()
    );
    Ok(GateSides {
        history,
        newest: newest_side,
        newest_words: point_words(loaded, newest),
        baseline_words,
    })
}

/// The change-point detector's settings from `--p-value`, `--window` and `--min-magnitude`
/// (default 0 for `history`: every significant change), checked.
pub fn detector_params(
    p_value: f64,
    window: usize,
    min_magnitude: Option<f64>,
) -> Result<ChangePointParams, PipelineError> {
    if !(p_value > 0.0 && p_value <= 1.0) {
        return Err(PipelineError::bad_input(format!(
            "--p-value {p_value}: give a probability in (0, 1], e.g. 0.001"
        )));
    }
    if window < 2 {
        return Err(PipelineError::bad_input(
            "--window: give at least 2 points (Otava's default is 50)",
        ));
    }
    Ok(ChangePointParams {
        max_p_value: p_value,
        window,
        min_magnitude: min_magnitude.unwrap_or(0.0),
    })
}

/// The gate's detector: as [`detector_params`], but without `--min-magnitude` a shift smaller
/// than the regression the gate fails on (`bound`) does not end the baseline; on quiet runs
/// a 2% step is significant, and would leave one point to compare with.
pub fn gate_detector_params(
    p_value: f64,
    window: usize,
    min_magnitude: Option<f64>,
    bound: f64,
) -> Result<ChangePointParams, PipelineError> {
    detector_params(p_value, window, min_magnitude.or(Some(bound)))
}

#[cfg(test)]
mod detector_tests {
    use super::*;

    #[test]
    fn detector_flags_are_checked_and_the_gate_defaults_to_its_bound() {
        let p = detector_params(0.001, 50, None).unwrap();
        assert_eq!((p.max_p_value, p.window, p.min_magnitude), (0.001, 50, 0.0));
        for (p_value, window) in [(0.0, 50), (1.5, 50), (f64::NAN, 50), (0.01, 1)] {
            let e = detector_params(p_value, window, None).unwrap_err();
            assert!(e.is_bad_input(), "{p_value} {window}: {e}");
        }
        assert_eq!(
            gate_detector_params(0.001, 50, None, 0.05)
                .unwrap()
                .min_magnitude,
            0.05
        );
        assert_eq!(
            gate_detector_params(0.001, 50, Some(0.2), 0.05)
                .unwrap()
                .min_magnitude,
            0.2
        );
    }
}
