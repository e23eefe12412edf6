//! The words of comparisons, gates, drift and fits, shared by the terminal (study summary,
//! `compare`, `run --baseline`) and the Markdown/HTML reports, so a verdict reads the same
//! everywhere. Everything is decided from the types (`Verdict`, `MetricId`, `TestKind`...),
//! never from text.

use crate::format::{format_fraction, format_ms, format_number, format_rate};
use loadlab_analysis::compare::{Comparison, Regression, TestKind};
use loadlab_analysis::study::{Drift, TrendDirection, UslIssue};
use loadlab_metrics::{MetricUnit, Verdict};

/// A value in its metric's unit: `612.00ms`, `27.6/s`, `0.50%`, `1200`.
pub fn format_value(unit: MetricUnit, v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    match unit {
        MetricUnit::Millis => format_ms(v),
        MetricUnit::PerSecond => format_rate(v),
        MetricUnit::Fraction => format_fraction(v),
        MetricUnit::Count => format_number(v),
        MetricUnit::Percent => format!("{v:.1}%"),
        MetricUnit::Bytes => crate::format::format_bytes(v),
        MetricUnit::BytesPerSecond => format!("{}/s", crate::format::format_bytes(v)),
        MetricUnit::Cores => format!("{:.1}%", v * 100.0),
        MetricUnit::Plain => crate::format::format_plain(v),
    }
}

/// A signed relative change: `+7.0%`, `−3.1%`, `0.0%` (no sign when it rounds to zero).
pub fn signed_pct(x: f64) -> String {
    if (x * 1000.0).round() == 0.0 {
        return "0.0%".into();
    }
    let s = format!("{:+.1}%", x * 100.0);
    s.replacen('-', "−", 1)
}

/// A signed difference in a metric's unit: `+0.40 pp` (error rate), `+1.20ms`, `−3.0/s`.
pub fn signed_difference(unit: MetricUnit, d: f64) -> String {
    let sign = if d < 0.0 {
        "−"
    } else if d > 0.0 {
        "+"
    } else {
        ""
    };
    let body = match unit {
        MetricUnit::Fraction => format!("{:.2} pp", d.abs() * 100.0),
        MetricUnit::Percent => format!("{:.1} pp", d.abs()),
        MetricUnit::Cores => format!("{:.1} pp", d.abs() * 100.0),
        _ => format_value(unit, d.abs()),
    };
    format!("{sign}{body}")
}

/// The CI the verdict was read from, as `+3.1% … +11.8%` (or in units for a shift).
pub fn ci_words(c: &Comparison) -> Option<String> {
    match (c.change_ci, c.difference_ci) {
        (Some([lo, hi]), _) => Some(format!("{} … {}", signed_pct(lo), signed_pct(hi))),
        (None, Some([lo, hi])) => {
            let u = c.metric.unit();
            Some(format!(
                "{} … {}",
                signed_difference(u, lo),
                signed_difference(u, hi)
            ))
        }
        _ => None,
    }
}

/// `+7.0% [+3.1% … +11.8%]`, `+0.40 pp [+0.21 pp … +0.61 pp]`, or `n/a`.
pub fn change_words(c: &Comparison) -> String {
    if c.is_degenerate() {
        return "none (identical runs)".into();
    }
    let ci = ci_words(c).map(|w| format!(" [{w}]")).unwrap_or_default();
    match (c.change, c.change_ci, c.difference) {
        (Some(ch), Some(_), _) => format!("{}{ci}", signed_pct(ch)),
        (_, None, Some(d)) if c.difference_ci.is_some() || c.change.is_none() => {
            format!("{}{ci}", signed_difference(c.metric.unit(), d))
        }
        (Some(ch), None, _) => format!("{} (no CI)", signed_pct(ch)),
        _ => "n/a".into(),
    }
}

/// `p = 0.004` / `p < 0.001`.
pub fn p_words(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_string()
    } else {
        format!("p = {p:.3}")
    }
}

/// A p-value in a table cell (`0.004`, `<0.001`, `–` when absent).
pub fn p_cell(p: Option<f64>) -> String {
    match p {
        Some(p) if p < 0.001 => "<0.001".into(),
        Some(p) => format!("{p:.3}"),
        None => "–".into(),
    }
}

/// Why a comparison reads as it does, in one clause after the verdict word:
/// * `~` — "no difference detected at 5+5 runs; the CI allows −3.0% … +12.4%";
/// * `equivalent` — "within ±2%: the CI −0.3% … +0.7% lies inside the band";
/// * `insufficient` — "4+4 runs; at least 5 per side are needed for a verdict";
/// * a difference — "+7.0% [+3.1% … +11.8%], Holm p = 0.004".
pub fn verdict_reason(c: &Comparison, band: f64, min_runs: usize) -> String {
    let runs = format!("{}+{}", c.n[0], c.n[1]);
    if let Some(requests) = c.thin_runs {
        return format!(
            "the runs hold about {requests} requests each, fewer than 10 of them beyond this percentile: each run's figure is nearly its maximum, so no verdict is drawn (p99 needs 1,000 requests a run, p95 200)"
        );
    }
    match c.verdict {
        Verdict::Insufficient => format!(
            "{runs} runs; at least {min_runs} per side (or one run against {min_runs}) are needed for a verdict"
        ),
        _ if c.is_degenerate() => format!(
            "the same value ({}) in every run on both sides",
            format_value(c.metric.unit(), c.baseline_median)
        ),
        Verdict::Equivalent => format!(
            "within ±{}: the CI {} lies inside the band",
            pct_plain(band),
            ci_words(c).unwrap_or_else(|| "n/a".into())
        ),
        Verdict::Inconclusive if c.effect_ci().is_some_and(|[lo, hi]| lo > 0.0 || hi < 0.0) => {
            // The metric's own CI excludes 0, but the family-wise correction does not allow
            // a claim: say so rather than "no difference".
            format!(
                "not significant after Holm's correction ({}), although this metric's own CI {} excludes 0; more runs would tell",
                c.p_adjusted
                    .map(|p| format!("Holm {}", p_words(p)))
                    .unwrap_or_else(|| "not tested".into()),
                ci_words(c).unwrap_or_default()
            )
        }
        Verdict::Inconclusive if c.effect_ci() == Some([0.0, 0.0]) => format!(
            "no difference detected at {runs} runs: most runs have the same value on both sides (the CI of the shift is 0 … 0)"
        ),
        Verdict::Inconclusive => {
            let allows = match ci_words(c) {
                Some(w) => format!("; the CI allows {w}"),
                None => "; no CI is available".into(),
            };
            let at = if c.test == TestKind::PredictionLogT || c.test == TestKind::PredictionRank {
                "with one run".to_string()
            } else {
                format!("at {runs} runs")
            };
            format!("no difference detected {at}{allows}")
        }
        _ => {
            let p = c
                .p_adjusted
                .map(|p| format!(", Holm {}", p_words(p)))
                .unwrap_or_default();
            format!("{}{p}", change_words(c))
        }
    }
}

/// What each verdict word means, one clause per word of the taxonomy ([`Verdict::ALL`]):
/// the legend printed under every comparison table, in the terminal and in the reports, so
/// `~` or `equivalent` is never left unexplained and reads the same everywhere.
pub fn verdict_legend(alpha: f64, equivalence: f64, min_runs: usize) -> String {
    verdict_legend_clauses(alpha, equivalence, min_runs).join("; ")
}

/// [`verdict_legend`], one clause per word (the terminal prints one per line).
pub fn verdict_legend_clauses(alpha: f64, equivalence: f64, min_runs: usize) -> Vec<String> {
    let mut clauses: Vec<String> = Vec::new();
    for v in Verdict::ALL {
        let clause = match v {
            Verdict::Slower => format!(
                "slower/faster (latency), worse/better (throughput, errors; higher/lower for throughput between variants offered different loads, which is neither better nor worse): Holm p < {alpha} and the 95% CI of the change excludes 0"
            ),
            Verdict::Faster
            | Verdict::Worse
            | Verdict::Better
            | Verdict::Higher
            | Verdict::Lower => continue,
            Verdict::Equivalent if equivalence > 0.0 => format!(
                "equivalent: the whole 95% CI of the change lies inside ±{} (two one-sided tests)",
                pct_plain(equivalence)
            ),
            Verdict::Equivalent => {
                "equivalent: not available, no equivalence band was set".to_string()
            }
            Verdict::Inconclusive => {
                "`~`: no difference detected at this number of runs, and equivalence not shown (the CI says how large a change is still possible)".to_string()
            }
            Verdict::Insufficient => format!(
                "insufficient: fewer than {min_runs} runs on a side, or a percentile with fewer than 10 requests beyond it in the runs (their figure is nearly their maximum); no verdict"
            ),
        };
        clauses.push(clause);
    }
    clauses
}

/// `p95 latency slower: +7.0% [+3.1% … +11.8%], Holm p = 0.004`.
pub fn verdict_sentence(c: &Comparison, band: f64, min_runs: usize) -> String {
    format!(
        "{} {}: {}",
        c.metric.label(),
        c.verdict,
        verdict_reason(c, band, min_runs)
    )
}

/// `12%` / `2.5%` (a band or bound without a sign).
pub fn pct_plain(x: f64) -> String {
    let p = x * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// `p95 latency at least +6.1% slower (CI +6.1% … +14.0%), bound 5%`.
pub fn regression_sentence(r: &Regression) -> String {
    let ci = match (r.change_ci, r.difference_ci) {
        (Some([lo, hi]), _) => format!("{} … {}", signed_pct(lo), signed_pct(hi)),
        (None, Some([lo, hi])) => {
            let u = r.metric.unit();
            format!(
                "{} … {}",
                signed_difference(u, lo),
                signed_difference(u, hi)
            )
        }
        _ => "n/a".into(),
    };
    let at_least = match r.at_least {
        Some(a) => format!("at least {}", signed_pct(a)),
        None => "up from 0 in every baseline run,".into(),
    };
    format!(
        "{} {at_least} {} (CI {ci}), bound {}",
        r.metric.label(),
        r.verdict,
        pct_plain(r.bound)
    )
}

/// `p95 latency rose steadily over the runs (Kendall τ = +0.82, Holm p = 0.001): warm-up too
/// short, or a leak?`
pub fn drift_sentence(d: &Drift) -> String {
    let (verb, hint) = match (d.direction, d.metric.is_latency()) {
        (TrendDirection::Rising, true) => ("rose", "warm-up too short, or a leak?"),
        (TrendDirection::Falling, true) => ("fell", "a cold start, or caches warming across runs?"),
        (TrendDirection::Rising, false) => ("rose", "the system warming up across runs?"),
        (TrendDirection::Falling, false) => ("fell", "a leak, throttling, or data piling up?"),
    };
    format!(
        "{} {verb} steadily over the runs (Kendall τ = {:+.2}, Holm {}): {hint}",
        crate::words::capitalize(&d.metric.label()),
        d.tau,
        p_words(d.p_adjusted)
    )
}

/// One USL issue in words.
pub fn usl_issue_sentence(issue: &UslIssue) -> String {
    match issue {
        UslIssue::PoorFit { r2 } => format!(
            "the fit is poor (R² = {r2:.2} < 0.9): do not trust σ, κ or N*"
        ),
        UslIssue::SmallestLevelMisfit {
            level,
            measured,
            predicted,
        } => format!(
            "the fit misses the measured throughput at {} VU{} by {} ({} predicted, {} measured): λ is not the throughput of one VU",
            format_number(*level),
            if *level == 1.0 { "" } else { "s" },
            signed_pct(predicted / measured - 1.0),
            format_rate(*predicted),
            format_rate(*measured)
        ),
        UslIssue::SystematicResiduals { runs, expected, p } => format!(
            "the fit misses the data's shape: its residuals change sign {} time{} where about {:.0} were expected (runs test, {}), so the curve runs above the points at some levels and below them at others",
            runs - 1,
            if *runs == 2 { "" } else { "s" },
            expected - 1.0,
            p_words(*p)
        ),
        UslIssue::NotIdentifiable => "throughput flattens at the last levels without falling: N* not identifiable from this sweep (the target saturated; sweep further to find a retrograde region)".into(),
        UslIssue::Extrapolated { low, high } => format!(
            "N* or its CI lies outside the tested range {}–{} VUs: extrapolated",
            format_number(*low),
            format_number(*high)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_metrics::{LatencyStat, MetricId, Quantity};

    fn comparison(verdict: Verdict, ci: Option<[f64; 2]>) -> Comparison {
        Comparison {
            baseline: "a".into(),
            variant: "b".into(),
            metric: MetricId::latency(LatencyStat::P95),
            n: [5, 5],
            baseline_median: 100.0,
            variant_median: 107.0,
            test: TestKind::MannWhitneyExact,
            p_value: Some(0.0079),
            p_adjusted: Some(0.04),
            change: ci.map(|_| 0.07),
            change_ci: ci,
            difference: Some(7.0),
            difference_ci: Some([3.0, 12.0]),
            verdict,
            thin_runs: None,
        }
    }

    #[test]
    fn each_verdict_explains_itself() {
        let c = comparison(Verdict::Slower, Some([0.031, 0.118]));
        assert_eq!(
            verdict_sentence(&c, 0.0, 5),
            "p95 latency slower: +7.0% [+3.1% … +11.8%], Holm p = 0.040"
        );
        let c = comparison(Verdict::Inconclusive, Some([-0.03, 0.124]));
        assert_eq!(
            verdict_sentence(&c, 0.0, 5),
            "p95 latency ~: no difference detected at 5+5 runs; the CI allows −3.0% … +12.4%"
        );
        let c = comparison(Verdict::Equivalent, Some([-0.003, 0.007]));
        assert_eq!(
            verdict_sentence(&c, 0.02, 5),
            "p95 latency equivalent: within ±2%: the CI −0.3% … +0.7% lies inside the band"
        );
        let mut c = comparison(Verdict::Insufficient, Some([0.03, 0.1]));
        c.n = [4, 4];
        assert!(verdict_sentence(&c, 0.0, 5).contains("4+4 runs; at least 5 per side"));
        let mut c = comparison(Verdict::Worse, None);
        c.metric = MetricId::run(Quantity::ErrorRate);
        c.change = None;
        c.difference = Some(0.004);
        c.difference_ci = Some([0.002, 0.006]);
        assert_eq!(change_words(&c), "+0.40 pp [+0.20 pp … +0.60 pp]");
    }

    #[test]
    fn the_legend_explains_every_word() {
        let with_band = verdict_legend(0.05, 0.02, 5);
        for v in Verdict::ALL {
            assert!(with_band.contains(v.as_str()), "{v} in {with_band}");
        }
        assert!(with_band.contains("±2%"));
        assert!(with_band.contains("Holm p < 0.05"));
        assert!(verdict_legend(0.05, 0.0, 5).contains("no equivalence band was set"));
    }

    #[test]
    fn the_gate_says_what_the_ci_shows() {
        let r = Regression {
            baseline: "a".into(),
            variant: "b".into(),
            metric: MetricId::latency(LatencyStat::P95),
            verdict: Verdict::Slower,
            at_least: Some(0.061),
            change_ci: Some([0.061, 0.14]),
            difference_ci: None,
            bound: 0.05,
        };
        assert_eq!(
            regression_sentence(&r),
            "p95 latency at least +6.1% slower (CI +6.1% … +14.0%), bound 5%"
        );
    }
}
