//! A scenario's performance over time: its runs or studies, oldest first, as one series per
//! plan fingerprint and metric, with the change points of each series (Otava's method, see
//! `change_points`) described as `compare` describes a change — the relative change of the
//! segment after against the segment before, with a Hodges–Lehmann 95% CI, and a verdict word.
//!
//! Invariants: points keep the order they are given (the store's run order); a series only
//! holds points measured with the same plan fingerprint (a changed load is a new series, not
//! a change point); a point's value is a run's value or a study's median (its CI beside it);
//! a point missing a metric is left out of that metric's series, and `index` counts the
//! points of the series it is in, from 0.

use crate::change_points::{detect_change_points, ChangePointParams};
use crate::stats::{hodges_lehmann_ratio, StatsError};
use loadlab_metrics::{MetricId, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Schema name of `loadlab history --json`.
pub const HISTORY_SCHEMA: &str = "loadlab.history.v1";

/// What a point of the history is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointKind {
    Run,
    Study,
}

/// One metric's value at one point: a run's value, or a study's median with its 95% CI.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PointValue {
    pub value: f64,
    pub ci: Option<[f64; 2]>,
}

/// A run or study as the history reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryPoint {
    /// Store id of the run or study.
    pub id: String,
    pub kind: PointKind,
    pub started_at: String,
    pub labels: BTreeMap<String, String>,
    /// Plan fingerprint; `None` for runs stored before fingerprints were kept.
    pub plan: Option<String>,
    pub values: BTreeMap<MetricId, PointValue>,
}

/// One point of one series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    pub index: usize,
    pub id: String,
    pub started_at: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
    pub ci: Option<[f64; 2]>,
}

/// A metric's values over the points of one plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub metric: MetricId,
    pub plan: Option<String>,
    pub points: Vec<SeriesPoint>,
}

/// A change point of one series, as the JSON reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryChangePoint {
    pub metric: MetricId,
    pub plan: Option<String>,
    /// Index of the first point of the new level in its series.
    pub index: usize,
    /// Id of that point's run or study.
    pub run_id: String,
    /// Its labels (commit, branch…).
    pub labels: BTreeMap<String, String>,
    /// Id and labels of the last point before the change.
    pub before_id: String,
    pub before_labels: BTreeMap<String, String>,
    /// `after / before − 1` (Hodges–Lehmann on the two segments; ratio of means when a
    /// value is not positive).
    pub change: f64,
    /// 95% CI of `change` (Moses); `None` when the segments are too short for one.
    pub change_ci: Option<[f64; 2]>,
    /// The detector's t-test p-value.
    pub p_value: f64,
    pub verdict: Verdict,
}

/// The detector's settings as the JSON records them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DetectorSettings {
    pub method: &'static str,
    pub max_p_value: f64,
    pub window: usize,
    pub min_magnitude: f64,
}

/// `loadlab history --json` (`loadlab.history.v1`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct History {
    pub schema: &'static str,
    pub name: String,
    pub kind: PointKind,
    pub detector: DetectorSettings,
    pub series: Vec<Series>,
    pub change_points: Vec<HistoryChangePoint>,
}

/// Builds the series of `points` (oldest first) for `metrics` and finds their change points.
pub fn build_history(
    name: &str,
    kind: PointKind,
    points: &[HistoryPoint],
    metrics: &[MetricId],
    params: &ChangePointParams,
) -> Result<History, StatsError> {
    let mut plans: Vec<Option<String>> = Vec::new();
    for p in points {
        if !plans.contains(&p.plan) {
            plans.push(p.plan.clone());
        }
    }
    let mut series = Vec::new();
    let mut change_points = Vec::new();
    for plan in &plans {
        for metric in metrics {
            let one = series_of(points, plan, metric);
            if one.points.is_empty() {
                continue;
            }
            change_points.extend(changes_of(&one, params)?);
            series.push(one);
        }
    }
    Ok(History {
        schema: HISTORY_SCHEMA,
        name: name.to_string(),
        kind,
        detector: DetectorSettings {
            method: "e-divisive means, t-test (Apache Otava)",
            max_p_value: params.max_p_value,
            window: params.window,
            min_magnitude: params.min_magnitude,
        },
        series,
        change_points,
    })
}

fn series_of(points: &[HistoryPoint], plan: &Option<String>, metric: &MetricId) -> Series {
    let points = points
        .iter()
        .filter(|p| &p.plan == plan)
        .filter_map(|p| p.values.get(metric).map(|v| (p, v)))
        .enumerate()
        .map(|(index, (p, v))| SeriesPoint {
            index,
            id: p.id.clone(),
            started_at: p.started_at.clone(),
            labels: p.labels.clone(),
            value: v.value,
            ci: v.ci,
        })
        .collect();
    Series {
        metric: metric.clone(),
        plan: plan.clone(),
        points,
    }
}

fn changes_of(
    series: &Series,
    params: &ChangePointParams,
) -> Result<Vec<HistoryChangePoint>, StatsError> {
    let values: Vec<f64> = series.points.iter().map(|p| p.value).collect();
    let found = detect_change_points(&values, params)?.change_points;
    let mut out = Vec::with_capacity(found.len());
    for (i, cp) in found.iter().enumerate() {
        let start = if i == 0 { 0 } else { found[i - 1].index };
        let end = found.get(i + 1).map_or(values.len(), |next| next.index);
        let (before, after) = (&values[start..cp.index], &values[cp.index..end]);
        let (change, change_ci) = describe_change(before, after, cp.test.forward_change());
        let increase = change > 0.0;
        let ci_excludes_zero = change_ci.is_none_or(|[lo, hi]| lo > 0.0 || hi < 0.0);
        let verdict = if ci_excludes_zero {
            series.metric.verdict_for(increase)
        } else {
            Verdict::Inconclusive
        };
        let at = &series.points[cp.index];
        let last_before = &series.points[cp.index - 1];
        out.push(HistoryChangePoint {
            metric: series.metric.clone(),
            plan: series.plan.clone(),
            index: cp.index,
            run_id: at.id.clone(),
            labels: at.labels.clone(),
            before_id: last_before.id.clone(),
            before_labels: last_before.labels.clone(),
            change,
            change_ci,
            p_value: cp.test.p_value,
            verdict,
        });
    }
    Ok(out)
}

/// Where the last stable segment before the newest point begins: the newest point is left
/// out, each series (one per gated metric, the newest point's plan) is searched for change
/// points, and the latest one found in any of them starts the segment (0 when none). The
/// segment is `start..len − 1`, what `loadlab gate` compares the newest point with.
pub fn stable_segment_start(
    series: &[Vec<f64>],
    params: &ChangePointParams,
) -> Result<usize, StatsError> {
    let mut start = 0;
    for values in series {
        let Some((_, history)) = values.split_last() else {
            continue;
        };
        let found = detect_change_points(history, params)?.change_points;
        if let Some(last) = found.last() {
            start = start.max(last.index);
        }
    }
    Ok(start)
}

/// The change between two segments with its CI, as `compare` measures a change (Hodges–
/// Lehmann ratio with Moses' interval); the ratio of means, without CI, when that cannot be
/// computed (a value ≤ 0, or segments too short for a 95% interval).
fn describe_change(before: &[f64], after: &[f64], mean_change: f64) -> (f64, Option<[f64; 2]>) {
    match hodges_lehmann_ratio(before, after) {
        Ok(r) => (r.change, Some([r.ci.0, r.ci.1])),
        Err(_) => (mean_change, None),
    }
}

#[cfg(test)]
mod tests;
