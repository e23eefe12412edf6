//! The seed study (000: 10 baseline runs at 35 VUs, 10 stress runs at 75 VUs) reproduced
//! through the study functions: the figures its authors computed by hand, and the verdict
//! they could not compute.

use loadlab_analysis::compare::{compare_samples, CompareOptions};
use loadlab_analysis::study::{is_unstable, metric_stats};
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
    // "27.58 ± 0.78 req/s, 95% CI [27.02, 28.14], CV 2.8%"
    assert!(close(t.mean, 27.58, 0.005), "{t:?}");
    assert!(close(t.sd, 0.78, 0.005), "{t:?}");
    assert!(
        close(t.mean_ci[0], 27.02, 0.01) && close(t.mean_ci[1], 28.14, 0.01),
        "{t:?}"
    );
    assert!(close(t.cv, 0.028, 0.0005), "{t:?}");
    let p = metric_stats(&BASELINE_P95).unwrap();
    // The report says "610.89 ± 92.30 ms, [544.92, 676.86], CV 15.1%": its mean is right, but
    // the sample SD of its own ten values is 91.17 (numpy.std(ddof=1)), so the CI is
    // [545.68, 676.11] and the CV 14.9% — the hand computation slipped.
    assert!(close(p.mean, 610.89, 0.01), "{p:?}");
    assert!(close(p.sd, 91.166, 0.001), "{p:?}");
    assert!(
        close(p.mean_ci[0], 545.68, 0.01) && close(p.mean_ci[1], 676.11, 0.01),
        "{p:?}"
    );
    assert!(close(p.cv, 0.1492, 0.0001), "{p:?}");
    // What the authors did not report: the median and its distribution-free CI.
    let ci = p.median_ci.unwrap();
    assert!(ci[0] <= p.median && p.median <= ci[1]);
    // p95 varies by 15% between runs, but `unstable` looks at throughput and p50 only.
    let mut m = BTreeMap::new();
    m.insert("requests.rate".to_string(), t);
    assert!(!is_unstable(&m));
    m.insert("latency_ms.p50".to_string(), p);
    assert!(is_unstable(&m));
}

#[test]
fn seed_000_stress_is_slower_with_a_ratio_ci() {
    let c = compare_samples(
        "baseline",
        "stress",
        &[(
            "latency_ms.p95".to_string(),
            BASELINE_P95.to_vec(),
            STRESS_P95.to_vec(),
        )],
        &CompareOptions::default(),
    );
    let c = &c[0];
    assert_eq!(c.verdict, "slower");
    // Complete separation of 10 + 10 runs; SciPy's `auto` uses the normal approximation
    // for n > 8 on both sides: scipy.stats.mannwhitneyu gives 0.00018267179110955.
    assert!(close(c.p_value, 0.000_182_671_791_109_55, 1e-12), "{c:?}");
    // "3.99× latency" is the ratio of means; the Hodges–Lehmann ratio is close to it.
    let ratio = 1.0 + c.change.unwrap();
    assert!(ratio > 3.6 && ratio < 4.4, "{c:?}");
    let [lo, hi] = c.change_ci.unwrap();
    assert!(lo < c.change.unwrap() && c.change.unwrap() < hi);
    let means = metric_stats(&STRESS_P95).unwrap().mean / metric_stats(&BASELINE_P95).unwrap().mean;
    assert!(close(means, 3.99, 0.005), "{means}");
}
