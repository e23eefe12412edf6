//! The seed study (000: 10 baseline runs at 35 VUs, 10 stress runs at 75 VUs) reproduced
//! through the study functions: the figures its authors computed by hand, and the verdict
//! they could not compute.

use loadlab_analysis::compare::{
    compare_pairs, CompareOptions, MetricSamples, PairSamples, TestKind,
};
use loadlab_analysis::study::{is_unstable, metric_stats};
use loadlab_metrics::{LatencyStat, MetricId, Quantity, Verdict};
use std::collections::BTreeMap;

const THROUGHPUT: [f64; 10] = [
    26.88, 26.20, 27.33, 27.31, 28.37, 27.76, 28.71, 27.31, 28.54, 27.40,
];
const BASELINE_P95: [f64; 10] = [
    600.51, 717.70, 727.38, 706.32, 506.16, 620.98, 489.08, 624.38, 491.25, 625.18,
];
const STRESS_P95: [f64; 10] = [
    2350.00, 2240.00, 2600.00, 2569.74, 2623.31, 2189.81, 2281.56, 2542.17, 2398.52, 2577.86,
];

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn seed_000_hand_computed_figures() {
    let t = metric_stats(&THROUGHPUT).unwrap();
    let [lo, hi] = t.mean_ci.unwrap();
    // "27.58 ± 0.78 req/s, 95% CI [27.02, 28.14], CV 2.8%"
    assert!(close(t.mean, 27.58, 0.005), "{t:?}");
    assert!(close(t.sd.unwrap(), 0.78, 0.005), "{t:?}");
    assert!(close(lo, 27.02, 0.01) && close(hi, 28.14, 0.01), "{t:?}");
    assert!(close(t.cv.unwrap(), 0.028, 0.0005), "{t:?}");
    let p = metric_stats(&BASELINE_P95).unwrap();
    // The report says "610.89 ± 92.30 ms, [544.92, 676.86], CV 15.1%": its mean is right, but
    // the sample SD of its own ten values is 91.17 (numpy.std(ddof=1)), so the CI is
    // [545.68, 676.11] and the CV 14.9% — the hand computation slipped.
    let [lo, hi] = p.mean_ci.unwrap();
    assert!(close(p.mean, 610.89, 0.01), "{p:?}");
    assert!(close(p.sd.unwrap(), 91.166, 0.001), "{p:?}");
    assert!(close(lo, 545.68, 0.01) && close(hi, 676.11, 0.01), "{p:?}");
    assert!(close(p.cv.unwrap(), 0.1492, 0.0001), "{p:?}");
    // What the authors did not report: the median and its distribution-free CI.
    let ci = p.median_ci.unwrap();
    assert!(ci[0] <= p.median && p.median <= ci[1]);
    // p95 varies by 15% between runs, but `unstable` looks at throughput and p50 only.
    let mut m = BTreeMap::new();
    m.insert(MetricId::run(Quantity::Throughput), t);
    assert!(!is_unstable(&m));
    m.insert(MetricId::latency(LatencyStat::P50), p);
    assert!(is_unstable(&m));
}

#[test]
fn seed_000_stress_is_slower_with_a_ratio_ci() {
    let pair = PairSamples {
        baseline: "baseline".into(),
        variant: "stress".into(),
        offered_differs: false,
        metrics: vec![MetricSamples {
            metric: MetricId::latency(LatencyStat::P95),
            baseline: BASELINE_P95.to_vec(),
            variant: STRESS_P95.to_vec(),
        }],
    };
    let c = compare_pairs(&[pair], &CompareOptions::default());
    let c = &c[0];
    assert_eq!(c.verdict, Verdict::Slower);
    // Complete separation of 10 + 10 runs, no ties: exact p = 2 / C(20, 10) = 1.08e-5
    // (SciPy's `auto` used the normal approximation here: 1.83e-4).
    assert_eq!(c.test, TestKind::MannWhitneyExact);
    assert!(close(c.p_value.unwrap(), 2.0 / 184_756.0, 1e-15), "{c:?}");
    // "3.99× latency" is the ratio of means; the Hodges–Lehmann ratio is close to it.
    let ratio = 1.0 + c.change.unwrap();
    assert!(ratio > 3.6 && ratio < 4.4, "{c:?}");
    let [lo, hi] = c.change_ci.unwrap();
    assert!(lo < c.change.unwrap() && c.change.unwrap() < hi);
    let means = metric_stats(&STRESS_P95).unwrap().mean / metric_stats(&BASELINE_P95).unwrap().mean;
    assert!(close(means, 3.99, 0.005), "{means}");
}
