//! How often do loadlab's regression gates cry wolf, and how often do they catch a real
//! regression? A Monte Carlo simulation through the real code path
//! (`loadlab_analysis::compare::{compare_pairs, regressions}`), printed as a table.
//!
//! Each replication draws per-run values of five gated latency metrics (the default
//! comparison set has five) from a log-normal distribution with the given CV, rounded to 3
//! significant digits as HDR histograms report them (so ties happen, as in real runs):
//! * study vs study: 5 vs 5 and 10 vs 10 runs, Mann–Whitney exact given ties, Holm over the
//!   five metrics, the gate on the 95% CI;
//! * one run vs a study of 10 runs (`run --baseline`, `compare STUDY run.json`): the
//!   prediction test on logs, Holm over the five metrics;
//! * the rule `run --baseline` used before (flag a metric when the run falls outside the
//!   study's min..max in the bad direction), for comparison.
//!
//! False alarm: both sides from the same distribution, the gate fails on *any* of the five
//! metrics (family-wise). "At the bound": p95 truly 5% slower, gate at 5% (a correct gate
//! fires at most 2.5% of the time there). Power: p95 truly 10% / 20% slower, the gate fails on
//! p95. Run with `bash bench/gates.sh` (`REPS=5000 bash bench/gates.sh` for tighter figures).

use loadlab_analysis::compare::{
    compare_pairs, regressions, CompareOptions, Comparison, MetricSamples, PairSamples,
};
use loadlab_analysis::stats::SplitMix64;
use loadlab_metrics::{LatencyStat, MetricId};

/// 3 significant digits, as a histogram with 3 significant digits reports a percentile.
fn hdr(v: f64) -> f64 {
    let scale = 10f64.powi(2 - v.log10().floor() as i32);
    (v * scale).round() / scale
}

fn lognormal_runs(rng: &mut SplitMix64, n: usize, median: f64, cv: f64) -> Vec<f64> {
    let sigma = (1.0 + cv * cv).ln().sqrt();
    (0..n)
        .map(|_| hdr(median * (sigma * rng.normal()).exp()))
        .collect()
}

fn metrics() -> Vec<MetricId> {
    [
        LatencyStat::Mean,
        LatencyStat::P50,
        LatencyStat::P90,
        LatencyStat::P95,
        LatencyStat::P99,
    ]
    .map(MetricId::latency)
    .to_vec()
}

/// Outcome of one replication.
#[derive(Default, Clone, Copy)]
struct Tally {
    /// The gate failed on some metric (any of the five).
    any: usize,
    /// The gate failed on p95.
    p95: usize,
}

#[derive(Clone, Copy)]
enum Design {
    Studies { runs: usize },
    OneRun { baseline: usize },
    OldRangeRule { baseline: usize },
}

impl Design {
    fn label(self) -> String {
        match self {
            Design::Studies { runs } => format!("study vs study, {runs}+{runs} runs"),
            Design::OneRun { baseline } => format!("one run vs {baseline} runs"),
            Design::OldRangeRule { baseline } => {
                format!("one run vs {baseline}, old min..max rule")
            }
        }
    }
}

/// Runs `reps` replications where p95 is truly `shift` slower; returns, for each gate
/// bound, how often the gate failed on any metric and on p95.
fn simulate(
    design: Design,
    cv: f64,
    shift: f64,
    bounds: &[f64],
    reps: usize,
    seed: u64,
) -> Vec<Tally> {
    let mut rng = SplitMix64(seed);
    let ids = metrics();
    let p95 = MetricId::latency(LatencyStat::P95);
    let options = CompareOptions::default();
    let mut tallies = vec![Tally::default(); bounds.len()];
    for _ in 0..reps {
        let (na, nb) = match design {
            Design::Studies { runs } => (runs, runs),
            Design::OneRun { baseline } | Design::OldRangeRule { baseline } => (baseline, 1),
        };
        let samples: Vec<MetricSamples> = ids
            .iter()
            .map(|m| {
                let factor = if *m == p95 { 1.0 + shift } else { 1.0 };
                MetricSamples {
                    metric: m.clone(),
                    baseline: lognormal_runs(&mut rng, na, 100.0, cv),
                    variant: lognormal_runs(&mut rng, nb, 100.0 * factor, cv),
                }
            })
            .collect();
        if let Design::OldRangeRule { .. } = design {
            // Flagged when the run lies above the study's max by more than the bound.
            for (t, bound) in tallies.iter_mut().zip(bounds) {
                let flagged: Vec<&MetricId> = samples
                    .iter()
                    .filter(|s| {
                        let max = s.baseline.iter().copied().fold(f64::MIN, f64::max);
                        let mut sorted = s.baseline.clone();
                        sorted.sort_by(f64::total_cmp);
                        let median = sorted[sorted.len() / 2];
                        s.variant[0] > max && s.variant[0] / median - 1.0 > *bound
                    })
                    .map(|s| &s.metric)
                    .collect();
                t.any += usize::from(!flagged.is_empty());
                t.p95 += usize::from(flagged.contains(&&p95));
            }
            continue;
        }
        let pair = PairSamples {
            baseline: "a".into(),
            variant: "b".into(),
            metrics: samples,
            offered_differs: false,
        };
        let comps: Vec<Comparison> = compare_pairs(&[pair], &options);
        for (t, bound) in tallies.iter_mut().zip(bounds) {
            let r = regressions(&comps, *bound);
            t.any += usize::from(!r.is_empty());
            t.p95 += usize::from(r.iter().any(|x| x.metric == p95));
        }
    }
    tallies
}

fn pct(count: usize, reps: usize) -> String {
    format!("{:.1}%", 100.0 * count as f64 / reps as f64)
}

fn main() {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let designs = [
        Design::Studies { runs: 10 },
        Design::Studies { runs: 5 },
        Design::OneRun { baseline: 10 },
        Design::OldRangeRule { baseline: 10 },
    ];
    let bounds = [0.0, 0.05];
    println!("Regression gates under simulation: {reps} replications per cell, five gated metrics, log-normal runs rounded to 3 significant digits.");
    println!("Gate 0% = any significant regression (verdict slower); gate 5% = the whole 95% CI beyond +5%.");
    println!();
    println!("| design | CV | false alarm, gate 0% | false alarm, gate 5% | fires at true +5%, gate 5% | power +10%, gate 0% / 5% | power +20%, gate 0% / 5% |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (d, design) in designs.iter().enumerate() {
        for (c, cv) in [0.05, 0.10, 0.20].iter().enumerate() {
            let seed = 1000 * d as u64 + 10 * c as u64;
            let null = simulate(*design, *cv, 0.0, &bounds, reps, seed + 1);
            let at_bound = simulate(*design, *cv, 0.05, &bounds, reps, seed + 2);
            let p10 = simulate(*design, *cv, 0.10, &bounds, reps, seed + 3);
            let p20 = simulate(*design, *cv, 0.20, &bounds, reps, seed + 4);
            println!(
                "| {} | {:.0}% | {} | {} | {} | {} / {} | {} / {} |",
                design.label(),
                cv * 100.0,
                pct(null[0].any, reps),
                pct(null[1].any, reps),
                pct(at_bound[1].p95, reps),
                pct(p10[0].p95, reps),
                pct(p10[1].p95, reps),
                pct(p20[0].p95, reps),
                pct(p20[1].p95, reps),
            );
        }
    }
}
