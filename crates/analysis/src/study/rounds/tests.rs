use super::*;
use loadlab_metrics::result::{encode_histogram, SegmentSummary};
use loadlab_metrics::{new_histogram, record_us};

/// A segment whose latencies are `base` µs stretched by `scale` over `n` requests (a spread
/// of values so that percentiles differ).
fn segment_latency(n: u64, base: u64, scale: f64) -> LatencyHistogram {
    let mut h = new_histogram();
    for i in 0..n {
        // 1.0 .. 3.0 times base, with a tail: the last 2% at 10×.
        let f = if i * 50 >= n * 49 {
            10.0
        } else {
            1.0 + 2.0 * i as f64 / n as f64
        };
        record_us(&mut h, (base as f64 * f * scale) as u64);
    }
    h
}

fn round(segments: &[LatencyHistogram]) -> RunResult {
    let mut merged = new_histogram();
    let mut r = RunResult::default();
    for (i, h) in segments.iter().enumerate() {
        merged.add(h).unwrap();
        r.segments.push(SegmentSummary {
            index: i as u32,
            host: None,
            started_at: String::new(),
            requests: h.len(),
            failed: 0,
            cpu_percent: 1.0,
            valid: true,
            invalid: Vec::new(),
            interrupted: false,
            start_offset_ms: 0.0,
            node: None,
            pod: None,
            clock: None,
            latency: encode_histogram(h),
        });
    }
    r.requests.total = merged.len();
    r.latency_ms.p50 = merged.value_at_quantile(0.5) as f64 / 1000.0;
    r.latency_ms.p99 = merged.value_at_quantile(0.99) as f64 / 1000.0;
    r
}

/// `rounds` rounds of `per_round` segments; segment j of round i is scaled by `scale(i, j)`.
fn variant(
    rounds: usize,
    per_round: usize,
    base: u64,
    scale: impl Fn(usize, usize) -> f64,
) -> Vec<RunResult> {
    (0..rounds)
        .map(|i| {
            let segs: Vec<_> = (0..per_round)
                .map(|j| segment_latency(2000, base, scale(i, j)))
                .collect();
            round(&segs)
        })
        .collect()
}

fn runs<'a>(name: &'a str, results: &'a [RunResult], ids: &'a [String]) -> VariantRuns<'a> {
    VariantRuns {
        name,
        runs: ids.iter().map(String::as_str).zip(results.iter()).collect(),
    }
}

fn ids(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

#[test]
fn a_merged_round_reads_the_same_percentiles_as_its_merged_histogram() {
    let results = variant(3, 4, 1000, |i, j| 1.0 + 0.1 * i as f64 + 0.05 * j as f64);
    let names = ids("a", 3);
    let study = analyze_rounds(&[runs("a", &results, &names)], &[]).unwrap();
    let rounds = &study.variants[0].rounds;
    assert_eq!(study.segments, 4);
    assert_eq!(rounds.len(), 3);
    let grid = Grid::of(rounds_of(&runs("a", &results, &names).runs).iter());
    for (r, result) in rounds_of(&runs("a", &results, &names).runs)
        .iter()
        .zip(&results)
    {
        let mut buf = vec![0; grid.values.len()];
        let dense: Vec<Vec<u64>> = r.segments.iter().map(|s| grid.counts(&s.latency)).collect();
        merged(0..dense.len(), &dense, &mut buf);
        // Exactly the run's own percentiles (the merged run's histogram), not an average.
        assert_eq!(grid.quantile(&buf, 0.5), result.latency_ms.p50);
        assert_eq!(grid.quantile(&buf, 0.99), result.latency_ms.p99);
    }
    assert_eq!(rounds[0].segments[3].requests, 2000);
}

#[test]
fn a_variant_twice_as_slow_has_a_ratio_of_two_with_a_ci_that_excludes_one() {
    let noise = |i: usize, j: usize| 1.0 + 0.04 * ((i * 7 + j * 3) % 5) as f64;
    let a = variant(5, 4, 1000, noise);
    let b = variant(5, 4, 2000, noise);
    let (ia, ib) = (ids("a", 5), ids("b", 5));
    let study = analyze_rounds(&[runs("a", &a, &ia), runs("b", &b, &ib)], &[(0, 1)]).unwrap();
    assert_eq!(study.comparisons.len(), 3);
    for c in &study.comparisons {
        assert_eq!((c.baseline.as_str(), c.variant.as_str()), ("a", "b"));
        assert!((c.ratio - 2.0).abs() < 0.01, "{c:?}");
        assert!(!c.thin, "8,000 requests a round carry a p99: {c:?}");
        assert!(
            c.ci[0] > 1.5 && c.ci[0] <= c.ratio && c.ci[1] >= c.ratio && c.ci[1] < 2.6,
            "{c:?}"
        );
    }
    // The same variant against itself: a CI around 1.
    let study = analyze_rounds(&[runs("a", &a, &ia), runs("a2", &a, &ia)], &[(0, 1)]).unwrap();
    for c in &study.comparisons {
        assert_eq!(c.ratio, 1.0);
        assert!(c.ci[0] < 1.0 && c.ci[1] > 1.0, "{c:?}");
    }
}

#[test]
fn the_level_that_varies_is_named_and_the_next_repetition_follows_it() {
    // Rounds differ (a slower target in some rounds), their segments agree.
    let by_round = variant(5, 4, 1000, |i, _| [1.0, 1.3, 0.8, 1.5, 1.1][i]);
    let names = ids("r", 5);
    let levels = analyze_rounds(&[runs("r", &by_round, &names)], &[])
        .unwrap()
        .variants[0]
        .levels
        .clone()
        .unwrap();
    assert!(levels.rounds_share > 0.95, "{levels:?}");
    assert_eq!(levels.metric, MetricId::latency(LatencyStat::P99));
    assert_eq!(levels.next, NextRepetition::MoreRounds);
    assert!(levels.ci_factor_more_rounds < levels.ci_factor_more_segments);
    // Segments differ (one generator host is slower), rounds agree.
    let by_segment = variant(5, 4, 1000, |_, j| [1.0, 1.4, 0.9, 1.2][j]);
    let levels = analyze_rounds(&[runs("s", &by_segment, &names)], &[])
        .unwrap()
        .variants[0]
        .levels
        .clone()
        .unwrap();
    assert!(levels.rounds_share < 0.05, "{levels:?}");
    assert_eq!((levels.rounds, levels.segments_per_round), (5, 4));
    // With the variance all within rounds, 5 rounds of 5 segments beat 6 rounds of 4.
    assert_eq!(levels.next, NextRepetition::MoreSegments);
}

#[test]
fn variance_components_match_a_hand_computation() {
    // Segment p99s (ms) of 2 rounds × 2 segments: [10, 12] and [14, 20].
    // Round means 11 and 17, grand 14; within = ((1+1) + (9+9)) / (2·1) = 10;
    // s1 = ((11-14)² + (17-14)²) / 1 = 18; between = 18 - 10/2 = 13.
    let p99s = [[10_000u64, 12_000], [14_000, 20_000]];
    let results: Vec<RunResult> = p99s
        .iter()
        .map(|r| {
            round(
                &r.iter()
                    .map(|&v| {
                        let mut h = new_histogram();
                        record_us(&mut h, v);
                        h
                    })
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    let names = ids("h", 2);
    let l = analyze_rounds(&[runs("h", &results, &names)], &[])
        .unwrap()
        .variants[0]
        .levels
        .clone()
        .unwrap();
    // One request a segment: p99 and p95 would be its maximum, so the median is looked at.
    assert_eq!(l.metric, MetricId::latency(LatencyStat::P50));
    let close = |a: f64, b: f64| (a - b).abs() < 0.02 * b;
    assert!(
        close(l.within_rounds, 10.0) && close(l.between_rounds, 13.0),
        "{l:?}"
    );
    assert!(close(l.rounds_share, 13.0 / 23.0), "{l:?}");
    // var(n1, n2) = 13/n1 + 10/(n1·n2): now 9.0; one more round 6.0; one more segment 7.83.
    assert!(
        close(l.ci_factor_more_rounds, (6.0f64 / 9.0).sqrt()),
        "{l:?}"
    );
    assert!(
        close(
            l.ci_factor_more_segments,
            ((6.5 + 10.0 / 6.0) / 9.0f64).sqrt()
        ),
        "{l:?}"
    );
}

#[test]
fn runs_that_are_not_rounds_give_no_rounds_analysis() {
    let plain = vec![RunResult::default(), RunResult::default()];
    let names = ids("p", 2);
    assert!(analyze_rounds(&[runs("p", &plain, &names)], &[]).is_none());
}
