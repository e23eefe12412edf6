//! A against B on per-run values: two-sided Mann–Whitney U, Holm's correction across the
//! compared metrics, the change `B/A − 1` with a 95% CI (Hodges–Lehmann on logs, Moses'
//! interval), and a verdict word. Also the `loadlab compare` output type.

use crate::stats;
use serde::{Deserialize, Serialize};

pub const COMPARE_SCHEMA: &str = "loadlab.compare.v1";

/// Significance level of the comparisons (applied to Holm-adjusted p-values).
pub const ALPHA: f64 = 0.05;

/// How the change and its CI were estimated.
pub const CHANGE_METHOD: &str = "hodges-lehmann-log";

/// One metric, one pair of variants.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Comparison {
    pub baseline: String,
    pub variant: String,
    pub metric: String,
    /// Runs on each side.
    pub n: [usize; 2],
    /// Medians of the per-run values on each side.
    pub baseline_median: f64,
    pub variant_median: f64,
    /// Two-sided Mann–Whitney U p-value.
    pub p_value: f64,
    /// Holm-adjusted across the metrics compared for this pair.
    pub p_adjusted: f64,
    /// `variant / baseline − 1` (Hodges–Lehmann estimate on logs); `null` when a side has a
    /// zero value (e.g. error rates of 0): then see the medians.
    pub change: Option<f64>,
    /// 95% CI of `change` (Moses); `null` when not available.
    pub change_ci: Option<[f64; 2]>,
    /// `faster` / `slower` (latency), `better` / `worse` (throughput, errors), `~` (no
    /// significant difference, or one inside the equivalence band).
    pub verdict: String,
}

/// Settings of a comparison.
#[derive(Debug, Clone)]
pub struct CompareOptions {
    pub alpha: f64,
    /// Practical-equivalence band (fraction): a significant change whose estimate lies
    /// within ±band is reported `~`.
    pub equivalence: f64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        Self {
            alpha: ALPHA,
            equivalence: 0.0,
        }
    }
}

/// Whether larger values of a metric are better (throughput) or worse (latency, errors).
pub fn higher_is_better(metric: &str) -> bool {
    metric == "requests.rate" || metric.ends_with(".rate") && !metric.starts_with("errors")
}

/// Whether a metric is a latency (verdicts `faster`/`slower`).
pub fn is_latency(metric: &str) -> bool {
    metric.contains("latency") || metric.contains("time")
}

/// The verdict word for a (significant) change of `change` on `metric`.
pub fn verdict_word(metric: &str, change: f64) -> &'static str {
    let up = change > 0.0;
    if is_latency(metric) {
        if up {
            "slower"
        } else {
            "faster"
        }
    } else if up == higher_is_better(metric) {
        "better"
    } else {
        "worse"
    }
}

/// Whether a verdict is a regression.
pub fn is_regression(verdict: &str) -> bool {
    verdict == "slower" || verdict == "worse"
}

fn median(values: &[f64]) -> f64 {
    stats::describe(values)
        .map(|s| s.median)
        .unwrap_or(f64::NAN)
}

/// Compares per-run samples metric by metric: `(metric, baseline values, variant values)`.
pub fn compare_samples(
    baseline: &str,
    variant: &str,
    samples: &[(String, Vec<f64>, Vec<f64>)],
    options: &CompareOptions,
) -> Vec<Comparison> {
    let p_values: Vec<f64> = samples.iter().map(|(_, a, b)| mwu_p(a, b)).collect();
    let adjusted = stats::holm(&p_values).unwrap_or_else(|_| p_values.clone());
    samples
        .iter()
        .zip(p_values.iter().zip(adjusted))
        .map(|((metric, a, b), (&p, p_adj))| {
            let (change, change_ci) = match stats::hodges_lehmann_ratio(a, b) {
                Ok(r) if r.change.is_finite() => (Some(r.change), Some([r.ci.0, r.ci.1])),
                _ => {
                    // Zeros (error rates): fall back to the ratio of medians without a CI.
                    let (ma, mb) = (median(a), median(b));
                    if ma > 0.0 && mb.is_finite() {
                        (Some(mb / ma - 1.0), None)
                    } else {
                        (None, None)
                    }
                }
            };
            let significant = p_adj < options.alpha;
            let verdict = match change {
                Some(c) if significant && c.abs() > options.equivalence => verdict_word(metric, c),
                None if significant => {
                    // Baseline median 0 (e.g. no errors) and a significant difference.
                    verdict_word(metric, median(b) - median(a))
                }
                _ => "~",
            };
            Comparison {
                baseline: baseline.to_string(),
                variant: variant.to_string(),
                metric: metric.clone(),
                n: [a.len(), b.len()],
                baseline_median: median(a),
                variant_median: median(b),
                p_value: p,
                p_adjusted: p_adj,
                change,
                change_ci,
                verdict: verdict.to_string(),
            }
        })
        .collect()
}

/// Two-sided Mann–Whitney p-value; 1 when every value is the same (nothing to tell apart).
pub fn mwu_p(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 1.0;
    }
    let first = a[0];
    if a.iter().chain(b).all(|&v| v == first) {
        return 1.0;
    }
    match stats::mann_whitney_u(a, b) {
        Ok(r) if r.p_value.is_finite() => r.p_value,
        _ => 1.0,
    }
}

/// One side of a `loadlab compare`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CompareSide {
    /// `run` or `study`.
    pub kind: String,
    pub id: String,
    /// The variant of a study, or the run's scenario name.
    pub label: String,
    pub runs: usize,
}

/// `loadlab compare --json`: schema `loadlab.compare.v1`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CompareResult {
    pub schema: String,
    pub tool_version: String,
    pub baseline: CompareSide,
    pub variant: CompareSide,
    pub equivalence: f64,
    pub alpha: f64,
    /// `--fail-on-regression` bound (fraction), when given.
    pub fail_on_regression: Option<f64>,
    pub comparisons: Vec<Comparison>,
    /// Metrics significantly worse by more than the bound.
    pub regressions: Vec<String>,
    pub warnings: Vec<String>,
}

/// Comparisons that are significantly worse by more than `bound` (fraction).
pub fn regressions(comparisons: &[Comparison], bound: f64) -> Vec<String> {
    comparisons
        .iter()
        .filter(|c| {
            is_regression(&c.verdict)
                && match c.change {
                    Some(ch) => {
                        if higher_is_better(&c.metric) {
                            -ch > bound
                        } else {
                            ch > bound
                        }
                    }
                    None => true,
                }
        })
        .map(|c| c.metric.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separated_samples_are_slower_after_holm() {
        let a = vec![10.0, 10.2, 10.1, 9.9, 10.3];
        let b = vec![20.0, 20.5, 19.8, 20.1, 20.2];
        let samples = vec![
            ("latency_ms.p50".to_string(), a.clone(), b.clone()),
            ("latency_ms.p95".to_string(), a.clone(), b.clone()),
            ("requests.rate".to_string(), b.clone(), a.clone()),
            ("errors.rate".to_string(), vec![0.0; 5], vec![0.0; 5]),
            ("latency_ms.p99".to_string(), a, b),
        ];
        let c = compare_samples("A", "B", &samples, &CompareOptions::default());
        assert_eq!(c[0].verdict, "slower");
        assert!(c[0].p_adjusted < 0.05);
        assert!((c[0].change.unwrap() - 1.0).abs() < 0.05);
        assert_eq!(c[2].verdict, "worse");
        assert_eq!(c[3].verdict, "~");
        assert_eq!(c[3].p_value, 1.0);
        assert_eq!(regressions(&c, 0.05).len(), 4);
    }

    #[test]
    fn equivalence_band_hides_small_changes() {
        let a = vec![10.0, 10.01, 10.02, 10.03, 10.04];
        let b = vec![10.2, 10.21, 10.22, 10.23, 10.24];
        let s = vec![("latency_ms.p50".to_string(), a, b)];
        let strict = compare_samples("A", "B", &s, &CompareOptions::default());
        assert_eq!(strict[0].verdict, "slower");
        let banded = compare_samples(
            "A",
            "B",
            &s,
            &CompareOptions {
                equivalence: 0.05,
                ..CompareOptions::default()
            },
        );
        assert_eq!(banded[0].verdict, "~");
    }
}
