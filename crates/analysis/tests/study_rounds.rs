//! The rounds analysis of `loadlab study --segments` checked against an independent NumPy
//! computation (scripts/stats_reference.py, `rounds_bootstrap.json`): the ratio of the medians
//! over rounds of each round's merged percentile and the variance per level agree to the
//! fixture's tolerance; the two-level bootstrap CI, drawn with another generator, agrees
//! within the Monte Carlo error of both.

mod common;

use common::{assert_fixture_close, fixture, num};
use loadlab_analysis::study::{analyze_rounds, VariantRuns};
use loadlab_metrics::result::{encode_histogram, SegmentSummary};
use loadlab_metrics::{new_histogram, record_us, LatencyStat, MetricId, RunResult};
use serde_json::Value;

/// A variant's rounds from the fixture: each segment's samples become its histogram.
fn rounds(v: &Value) -> Vec<RunResult> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|round| {
            let mut r = RunResult::default();
            for (i, samples) in round.as_array().unwrap().iter().enumerate() {
                let mut h = new_histogram();
                for s in samples.as_array().unwrap() {
                    record_us(&mut h, s.as_u64().unwrap());
                }
                r.requests.total += h.len();
                r.segments.push(SegmentSummary {
                    index: i as u32,
                    host: None,
                    started_at: String::new(),
                    requests: h.len(),
                    failed: 0,
                    cpu_percent: 0.0,
                    valid: true,
                    invalid: Vec::new(),
                    interrupted: false,
                    start_offset_ms: 0.0,
                    node: None,
                    pod: None,
                    clock: None,
                    latency: encode_histogram(&h),
                });
            }
            r
        })
        .collect()
}

fn side<'a>(name: &'a str, ids: &'a [String], runs: &'a [RunResult]) -> VariantRuns<'a> {
    VariantRuns {
        name,
        runs: ids.iter().map(String::as_str).zip(runs).collect(),
    }
}

#[test]
fn rounds_of_segments_match_numpy() {
    let fx = fixture("rounds_bootstrap.json");
    let (a, b) = (rounds(&fx["a"]), rounds(&fx["b"]));
    let ids: Vec<String> = (0..a.len()).map(|i| format!("r{i}")).collect();
    let study = analyze_rounds(&[side("a", &ids, &a), side("b", &ids, &b)], &[(0, 1)]).unwrap();
    for (stat, key) in [
        (LatencyStat::P50, "p50"),
        (LatencyStat::P95, "p95"),
        (LatencyStat::P99, "p99"),
    ] {
        let c = study
            .comparisons
            .iter()
            .find(|c| c.metric == MetricId::latency(stat))
            .unwrap();
        let what = format!("b/a {key}");
        assert_fixture_close(
            "rounds_bootstrap.json",
            "ratios",
            c.ratio,
            num(&fx["ratios"][key]),
            &what,
        );
        // Two bootstraps with different generators: each CI end within 0.3 of the bootstrap
        // distribution's SD (the Monte Carlo error of a 2.5% point is about 0.06 SD at 2,000
        // resamples), and the widths within 15%.
        let boot = &fx["bootstrap"][key];
        let sd = num(&boot["sd"]);
        let (lo, hi) = (num(&boot["ci"][0]), num(&boot["ci"][1]));
        assert!(
            (c.ci[0] - lo).abs() < 0.3 * sd,
            "{what}: CI {:?} vs NumPy [{lo}, {hi}] (sd {sd})",
            c.ci
        );
        assert!(
            (c.ci[1] - hi).abs() < 0.3 * sd,
            "{what}: CI {:?} vs NumPy [{lo}, {hi}] (sd {sd})",
            c.ci
        );
        let width = (c.ci[1] - c.ci[0]) / (hi - lo);
        assert!((0.85..1.15).contains(&width), "{what}: width ratio {width}");
        assert_eq!(
            c.thin,
            key == "p99",
            "{what}: 900 requests a round hold a p95, not a p99"
        );
    }
    for v in &study.variants {
        // Each variant's own percentiles: the median over rounds exactly, the two-level CI
        // within the Monte Carlo error.
        for (p, key) in v.percentiles.iter().zip(["p50", "p95", "p99"]) {
            let expected = &fx["percentiles"][&v.name][key];
            let what = format!("{} {key}", v.name);
            assert_fixture_close(
                "rounds_bootstrap.json",
                "median_ms",
                p.median_ms,
                num(&expected["median_ms"]),
                &what,
            );
            let sd = num(&expected["sd"]);
            for end in 0..2 {
                let want = num(&expected["ci_ms"][end]);
                assert!(
                    (p.ci_ms[end] - want).abs() < 0.3 * sd,
                    "{what}: CI {:?} vs NumPy {want} (sd {sd})",
                    p.ci_ms
                );
            }
        }
        let l = v.levels.as_ref().unwrap();
        let expected = &fx["levels"][&v.name];
        assert_eq!(l.metric.to_string(), expected["metric"].as_str().unwrap());
        for (key, got) in [
            ("within_rounds", l.within_rounds),
            ("between_rounds", l.between_rounds),
            ("rounds_share", l.rounds_share),
            ("ci_factor_more_rounds", l.ci_factor_more_rounds),
            ("ci_factor_more_segments", l.ci_factor_more_segments),
        ] {
            let what = format!("{}: {key}", v.name);
            assert_fixture_close(
                "rounds_bootstrap.json",
                key,
                got,
                num(&expected[key]),
                &what,
            );
        }
    }
}
