//! Sweeps: the verdicts on the knee and the USL fit, and the sweep section's charts and table.

use super::metrics::pct;
use super::StudyResult;
use crate::chart::{Axis, Chart, Rule, Series, SeriesKind, Unit};
use crate::doc::{Block, Level, Section, Table, Verdict};
use crate::format::{format_fraction, format_ms, format_number, format_plain, format_rate};
use crate::verdict_words::usl_issue_sentence;
use loadlab_analysis::study::{
    LoadKind, Saturation, SweepPoint, SweepResult, UslIssue, UslResult, UslSkipped,
};
use loadlab_metrics::{MetricId, Quantity};

/// What a sweep found: the knees of its curves and what the USL can and cannot say.
pub(super) fn sweep_verdicts(sw: &SweepResult) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    let unit = match sw.parameter {
        LoadKind::Vus => "VUs",
        LoadKind::Rate => "req/s offered",
    };
    match sw.knee {
        Some(k) => verdicts.push(Verdict::new(
            Level::Info,
            format!("Throughput stops growing in proportion to the load at about {k:.0} {unit} (knee of the throughput curve)."),
        )),
        None => verdicts.push(Verdict::new(
            Level::Info,
            "No knee in the throughput curve: it does not bend (its slope never halves) over the range tested.",
        )),
    }
    if let Some(k) = sw.latency_knee {
        verdicts.push(Verdict::new(
            Level::Info,
            format!("p95 latency starts to climb steeply at about {k:.0} {unit}."),
        ));
    }
    if let Some(plateau) = &sw.saturation {
        verdicts.push(Verdict::new(
            Level::Info,
            saturation_sentence(plateau, unit),
        ));
    }
    if let Some(u) = &sw.usl {
        if let (Some(n), Some(peak)) = (u.n_star, u.peak) {
            let ci = u
                .n_star_ci
                .as_ref()
                .map(|ci| match ci.high {
                    Some(h) => format!(" (95% CI {:.0}–{h:.0})", ci.low),
                    None => format!(" (95% CI from {:.0}, unbounded above)", ci.low),
                })
                .unwrap_or_default();
            let extrapolated = u
                .issues
                .iter()
                .any(|i| matches!(i, UslIssue::Extrapolated { .. }));
            verdicts.push(Verdict::new(
                if u.reliable() && !extrapolated { Level::Info } else { Level::Warn },
                format!(
                    "The Universal Scalability Law predicts a peak of {} at about {n:.0} VUs{ci} (R² = {:.2}){}.",
                    format_rate(peak),
                    u.r2,
                    if extrapolated { ", extrapolated beyond the levels tested" } else { "" }
                ),
            ));
        }
        for issue in &u.issues {
            if matches!(issue, UslIssue::Extrapolated { .. }) && u.n_star.is_some() {
                continue;
            }
            verdicts.push(Verdict::new(
                Level::Warn,
                format!("USL fit: {}.", usl_issue_sentence(issue)),
            ));
        }
    }
    if let Some(skip) = &sw.usl_skipped {
        verdicts.push(Verdict::new(
            Level::Info,
            format!("No USL fit: {}.", usl_skipped_words(skip)),
        ));
    }
    verdicts
}

/// `Throughput saturates at ~930/s from 4 VUs: it does not rise with more load.`
pub fn saturation_sentence(plateau: &Saturation, unit: &str) -> String {
    format!(
        "Throughput saturates at ~{}/s from {} {unit}: it stays there, within the noise, at every higher level.",
        format_plain(plateau.throughput),
        format_number(plateau.from)
    )
}

/// Why a sweep has no USL fit, in words.
pub fn usl_skipped_words(skip: &UslSkipped) -> String {
    match skip {
        UslSkipped::RateSweep => {
            "the USL models concurrency, and this sweep varies the arrival rate".into()
        }
        UslSkipped::TooFewRuns { runs, needed } => {
            format!(
                "it needs at least {needed} runs over 3 concurrency levels, this sweep has {runs}"
            )
        }
        UslSkipped::FitFailed { error } => format!("the fit failed ({error})"),
    }
}

fn usl_curve(u: &UslResult, max_n: f64) -> Vec<(f64, f64)> {
    (0..=60)
        .map(|i| {
            let n = 1.0 + (max_n - 1.0).max(0.0) * i as f64 / 60.0;
            (
                n,
                u.lambda * n / (1.0 + u.sigma * (n - 1.0) + u.kappa * n * (n - 1.0)),
            )
        })
        .collect()
}

pub(super) fn sweep_section(s: &StudyResult, runs: &super::Runs) -> Option<Section> {
    let sw = s.sweep.as_ref()?;
    let mut sec = Section::new("sweep", "Sweep");
    let load_axis = || match sw.parameter {
        LoadKind::Vus => Axis::linear("virtual users", Unit::Count),
        LoadKind::Rate => Axis::linear("offered rate (req/s)", Unit::PerSecond),
    };
    sec.push(Block::chart(throughput_chart(s, sw, load_axis())));
    sec.push(Block::chart(latency_chart(sw, load_axis())));
    sec.push(Block::Table(
        levels_table(sw).with_note("Medians across the runs of each level."),
    ));
    if let Some(changes) = super::sweep_changes::sweep_changes(s, runs) {
        sec.push(Block::Table(changes));
    }
    if let Some(u) = &sw.usl {
        sec.push(Block::Facts(usl_facts(u)));
    }
    Some(sec)
}

/// Median and per-run throughput against load, with the knee and (where it describes the
/// points) the USL fit.
fn throughput_chart(s: &StudyResult, sw: &SweepResult, load: Axis) -> Chart {
    let mut all = Vec::new();
    for p in &sw.points {
        if let Some(v) = s.variants.iter().find(|v| v.name == p.variant) {
            if let Some(m) = v.metrics.get(&MetricId::run(Quantity::Throughput)) {
                all.extend(m.values.iter().map(|y| (p.value, *y)));
            }
        }
    }
    let medians = sw.points.iter().map(|p| (p.value, p.throughput)).collect();
    let mut c = Chart::new(
        "sweep-throughput",
        "Throughput against load",
        load,
        Axis::linear("throughput", Unit::PerSecond),
    )
    .describe(if sw.usl.as_ref().is_some_and(|u| u.poor_fit) {
        "Median throughput at each load level (line), every run (dots) and the knee (dashed). The Universal Scalability Law fit is not drawn: it does not describe these points (see the caveats)."
    } else {
        "Median throughput at each load level (line), every run (dots), the knee (dashed) and the Universal Scalability Law fit."
    })
    .series(Series::new("median throughput", SeriesKind::Line, 0, medians))
    .series(Series::new("runs", SeriesKind::Points, 5, all));
    if let Some(u) = sw.usl.as_ref().filter(|u| !u.poor_fit) {
        let max_n = sw.points.iter().map(|p| p.value).fold(1.0, f64::max);
        c = c.series(
            Series::new(
                &format!(
                    "USL fit (R² {:.2}{})",
                    u.r2,
                    if u.reliable() { "" } else { ", unreliable" }
                ),
                SeriesKind::Line,
                1,
                usl_curve(u, max_n),
            )
            .dashed(),
        );
    }
    if let Some(k) = sw.knee {
        c = c.rule(Rule::x(k, format!("knee ≈ {k:.0}"), Level::Warn));
    }
    c
}

/// Median p50, p95 and p99 against load, with the latency knee.
fn latency_chart(sw: &SweepResult, load: Axis) -> Chart {
    let line = |name: &str, color: usize, stat: fn(&SweepPoint) -> f64| {
        let points = sw.points.iter().map(|p| (p.value, stat(p))).collect();
        Series::new(name, SeriesKind::Line, color, points)
    };
    let mut c = Chart::new(
        "sweep-latency",
        "Latency against load",
        load,
        Axis::linear("latency (median of runs)", Unit::Millis),
    )
    .describe("Median p50, p95 and p99 at each load level: where the lines bend upwards the target queues.")
    .series(line("p50", 2, |p| p.p50))
    .series(line("p95", 0, |p| p.p95))
    .series(line("p99", 1, |p| p.p99));
    if let Some(k) = sw.latency_knee {
        c = c.rule(Rule::x(k, format!("latency knee ≈ {k:.0}"), Level::Warn));
    }
    c
}

/// One row per load level, with the change of throughput from the level before.
fn levels_table(sw: &SweepResult) -> Table {
    let mut t = Table::new(&[
        ">load",
        "variant",
        ">throughput",
        ">p50",
        ">p95",
        ">p99",
        ">errors",
        ">change of throughput",
    ]);
    let mut prev: Option<f64> = None;
    for p in &sw.points {
        t.row(cells![
            format!("{:.0}", p.value),
            p.variant.as_str(),
            format_rate(p.throughput),
            format_ms(p.p50),
            format_ms(p.p95),
            format_ms(p.p99),
            format_fraction(p.error_rate),
            prev.map(|q| if q > 0.0 {
                pct(p.throughput / q - 1.0)
            } else {
                String::new()
            })
            .unwrap_or_default()
        ]);
        prev = Some(p.throughput);
    }
    t
}

/// The USL's parameters, its peak, how well it fits and its caveats.
fn usl_facts(u: &UslResult) -> Vec<(String, String)> {
    let mut facts = vec![
        ("USL σ (contention)".into(), format!("{:.4}", u.sigma)),
        ("USL κ (coherency)".into(), format!("{:.6}", u.kappa)),
        ("USL λ (throughput of one VU)".into(), format_rate(u.lambda)),
        ("Peak".into(), usl_peak_words(u)),
        (
            "Fit".into(),
            format!(
                "R² = {:.3}; {}",
                u.r2,
                if u.reliable() {
                    "reliable"
                } else {
                    "unreliable"
                }
            ),
        ),
    ];
    for issue in &u.issues {
        facts.push(("Caveat".into(), usl_issue_sentence(issue)));
    }
    facts
}

/// The peak throughput and where it is, with its interval, or why there is none.
fn usl_peak_words(u: &UslResult) -> String {
    match (u.n_star, u.peak) {
        (Some(n), Some(p)) => format!(
            "{} at N* ≈ {n:.1} VUs{}",
            format_rate(p),
            u.n_star_ci
                .as_ref()
                .map(|ci| match ci.high {
                    Some(h) => format!(
                        ", 95% CI {:.1}–{h:.1} ({} bootstrap resamples)",
                        ci.low, ci.replicates
                    ),
                    None => format!(", 95% CI from {:.1}, unbounded above", ci.low),
                })
                .unwrap_or_default()
        ),
        _ if u.issues.contains(&UslIssue::NotIdentifiable) => {
            "not identifiable from this sweep (no retrograde region)".into()
        }
        _ => "none (κ = 0: no retrograde scaling in the range)".into(),
    }
}
