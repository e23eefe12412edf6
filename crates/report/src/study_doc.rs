//! Studies, sweeps, capacity searches and comparisons → [`ReportDoc`].
//!
//! The statistics come from `study.json` / `capacity.json` / the comparison record
//! (crate `loadlab-analysis`); the runs (when their files are at hand) add the time series,
//! the merged latency distributions, errors and per-threshold counts.

use crate::chart::{Axis, Chart, Rule, Series, SeriesKind, Unit};
use crate::doc::{Block, Cell, DocKind, Level, ReportDoc, Section, Table, Verdict};
use crate::format::{format_fraction, format_ms, format_rate, format_secs};
use crate::run_doc::{caveats, measurement_methods, plan_chart, PlannedLoad};
use crate::words::*;
use loadlab_analysis::capacity::CapacityResult;
use loadlab_analysis::compare::{CompareResult, Comparison};
use loadlab_analysis::study::{MetricStats, StudyResult, VariantStats};
use loadlab_metrics::result::decode_histogram;
use loadlab_metrics::RunResult;
use std::collections::BTreeMap;

/// Runs by store id (those whose files could be read).
pub type Runs = BTreeMap<String, RunResult>;

/// `latency_ms.p95` → `p95 latency`, `groups.auth.latency_ms.p95` → `p95 latency of group auth`.
pub fn metric_words(metric: &str) -> String {
    let (scope, rest) = if let Some(r) = metric.strip_prefix("groups.") {
        match r.rsplit_once(".latency_ms.") {
            Some((g, p)) => return format!("{p} latency of group `{g}`"),
            None => ("", r),
        }
    } else if let Some(r) = metric.strip_prefix("steps.") {
        match r.rsplit_once(".latency_ms.") {
            Some((s, p)) => return format!("{p} latency of step `{s}`"),
            None => ("", r),
        }
    } else {
        ("", metric)
    };
    let w = match rest {
        "requests.rate" => "throughput".to_string(),
        "errors.rate" => "error rate".to_string(),
        "latency_ms.mean" => "mean latency".to_string(),
        "latency_ms.max" => "max latency".to_string(),
        r => match r.strip_prefix("latency_ms.") {
            Some(p) => format!("{p} latency"),
            None => format!("`{r}`"),
        },
    };
    format!("{w}{scope}")
}

fn metric_unit(metric: &str) -> Unit {
    if metric == "errors.rate" {
        Unit::Fraction
    } else if metric.ends_with("rate") {
        Unit::PerSecond
    } else if metric.contains("latency") {
        Unit::Millis
    } else {
        Unit::Plain
    }
}

fn fmt(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Millis => format_ms(v),
        Unit::Fraction => format_fraction(v),
        Unit::PerSecond => format_rate(v),
        _ => format!("{v:.3}"),
    }
}

fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

fn p_words(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_string()
    } else {
        format!("p = {p:.3}")
    }
}

/// `+299.0% [+258.0%, +358.0%]`.
pub fn change_words(c: &Comparison) -> String {
    match (c.change, c.change_ci) {
        (Some(ch), Some([lo, hi])) => format!("{} [{}, {}]", pct(ch), pct(lo), pct(hi)),
        (Some(ch), None) => format!("{} (no CI)", pct(ch)),
        _ => "n/a".to_string(),
    }
}

/// One sentence per compared pair: what is significantly different, with effect, CI and p.
pub fn comparison_verdicts(comparisons: &[Comparison], alpha: f64) -> Vec<Verdict> {
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for c in comparisons {
        if !pairs.contains(&(c.baseline.as_str(), c.variant.as_str())) {
            pairs.push((&c.baseline, &c.variant));
        }
    }
    let mut out = Vec::new();
    for (b, v) in pairs {
        let cs: Vec<&Comparison> = comparisons
            .iter()
            .filter(|c| c.baseline == b && c.variant == v)
            .collect();
        let sig: Vec<&&Comparison> = cs.iter().filter(|c| c.verdict != "~").collect();
        if sig.is_empty() {
            out.push(Verdict::new(
                Level::Info,
                format!(
                    "`{v}` and `{b}` show no significant difference on the {} metric{} compared (α = {alpha}, Holm-corrected).",
                    cs.len(),
                    if cs.len() == 1 { "" } else { "s" }
                ),
            ));
            continue;
        }
        let worse = sig
            .iter()
            .any(|c| loadlab_analysis::compare::is_regression(&c.verdict));
        let headline = sig
            .iter()
            .find(|c| c.metric == "latency_ms.p95")
            .or_else(|| sig.first())
            .expect("non-empty");
        let others: Vec<String> = sig
            .iter()
            .filter(|c| c.metric != headline.metric)
            .map(|c| {
                format!(
                    "{} {} ({})",
                    metric_words(&c.metric),
                    c.verdict,
                    change_words(c)
                )
            })
            .collect();
        let mut text = format!(
            "`{v}` is significantly {} than `{b}`: {} {}, {}",
            headline.verdict,
            metric_words(&headline.metric),
            change_words(headline),
            p_words(headline.p_adjusted)
        );
        if !others.is_empty() {
            text.push_str(&format!("; also {}", others.join(", ")));
        }
        text.push('.');
        out.push(Verdict::new(
            if worse { Level::Warn } else { Level::Pass },
            text,
        ));
    }
    out
}

/// The benchstat-style table.
pub fn comparison_table(comparisons: &[Comparison]) -> Table {
    let mut t = Table::new(&[
        "baseline → variant",
        "metric",
        ">baseline median",
        ">variant median",
        ">change [95% CI]",
        ">p (Holm)",
        ">n",
        "verdict",
    ]);
    for c in comparisons {
        let unit = metric_unit(&c.metric);
        let level = if c.verdict == "~" {
            None
        } else if loadlab_analysis::compare::is_regression(&c.verdict) {
            Some(Level::Fail)
        } else {
            Some(Level::Pass)
        };
        t.row(vec![
            format!("{} → {}", c.baseline, c.variant).into(),
            metric_words(&c.metric).into(),
            fmt(unit, c.baseline_median).into(),
            fmt(unit, c.variant_median).into(),
            change_words(c).into(),
            format!("{:.3}", c.p_adjusted).into(),
            format!("{}+{}", c.n[0], c.n[1]).into(),
            Cell {
                text: c.verdict.clone(),
                level,
            },
        ]);
    }
    t.with_note("Change = variant / baseline − 1 (Hodges–Lehmann estimate on log values, Moses 95% CI); p: two-sided Mann–Whitney U, Holm-corrected across the metrics of a pair; `~` = no significant difference (or one inside the equivalence band).")
}

fn median_ci_words(unit: Unit, m: &MetricStats) -> String {
    match m.median_ci {
        Some([lo, hi]) => format!(
            "{} [{}, {}]",
            fmt(unit, m.median),
            fmt(unit, lo),
            fmt(unit, hi)
        ),
        None => format!("{} [n<6]", fmt(unit, m.median)),
    }
}

fn metric_row(metric: &str, m: &MetricStats) -> Vec<Cell> {
    let unit = metric_unit(metric);
    let half = (m.mean_ci[1] - m.mean_ci[0]) / 2.0;
    let unstable =
        metric != "errors.rate" && m.n >= 2 && m.cv >= loadlab_analysis::stats::UNSTABLE_CV;
    vec![
        metric_words(metric).into(),
        m.n.to_string().into(),
        median_ci_words(unit, m).into(),
        format!("{} ± {}", fmt(unit, m.mean), fmt(unit, half)).into(),
        if unstable {
            Cell::level(format!("{:.1}%", m.cv * 100.0), Level::Warn)
        } else {
            format!("{:.1}%", m.cv * 100.0).into()
        },
        format!("{} – {}", fmt(unit, m.min), fmt(unit, m.max)).into(),
    ]
}

const METRIC_COLUMNS: [&str; 6] = [
    "metric",
    ">runs",
    ">median [95% CI]",
    ">mean ± 95% CI",
    ">CV",
    ">min – max",
];

const MAIN_METRICS: [&str; 7] = [
    "requests.rate",
    "errors.rate",
    "latency_ms.p50",
    "latency_ms.p90",
    "latency_ms.p95",
    "latency_ms.p99",
    "latency_ms.max",
];

fn variant_runs<'a>(v: &VariantStats, runs: &'a Runs) -> Vec<&'a RunResult> {
    v.runs.iter().filter_map(|id| runs.get(id)).collect()
}

fn all_runs<'a>(s: &StudyResult, runs: &'a Runs) -> Vec<&'a RunResult> {
    s.variants
        .iter()
        .flat_map(|v| v.runs.iter().chain(&v.excluded_runs))
        .filter_map(|id| runs.get(id))
        .collect()
}

/// Threshold expression → per variant (met, of runs, actual values).
fn threshold_counts(v: &VariantStats, runs: &Runs) -> Vec<(String, usize, usize, Vec<f64>)> {
    let mut out: Vec<(String, usize, usize, Vec<f64>)> = Vec::new();
    for r in variant_runs(v, runs) {
        for t in &r.thresholds {
            let i = match out.iter().position(|e| e.0 == t.expr) {
                Some(i) => i,
                None => {
                    out.push((t.expr.clone(), 0, 0, Vec::new()));
                    out.len() - 1
                }
            };
            out[i].2 += 1;
            if t.ok {
                out[i].1 += 1;
            }
            if let Some(a) = t.actual {
                out[i].3.push(a);
            }
        }
    }
    out
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Builds the report of a study (variants × repetitions, or a sweep).
pub fn study_report(s: &StudyResult, runs: &Runs, plan: Option<&PlannedLoad>) -> ReportDoc {
    let mut verdicts = Vec::new();
    let every = all_runs(s, runs);
    if s.interrupted {
        verdicts.push(Verdict::new(
            Level::Warn,
            "The study was interrupted: not every planned run was made.",
        ));
    }
    let excluded: usize = s.variants.iter().map(|v| v.excluded_runs.len()).sum();
    if excluded > 0 {
        let reasons: Vec<String> = s
            .variants
            .iter()
            .flat_map(|v| v.excluded_runs.iter())
            .filter_map(|id| runs.get(id))
            .flat_map(|r| r.invalid_reasons.iter().cloned())
            .collect();
        verdicts.push(Verdict::new(
            Level::Fail,
            format!(
                "{excluded} run{} excluded from the statistics as invalid measurements{}.",
                if excluded == 1 { " was" } else { "s were" },
                if reasons.is_empty() {
                    String::new()
                } else {
                    format!(": {}", reasons[0])
                }
            ),
        ));
    } else if !every.is_empty() {
        verdicts.push(Verdict::new(
            Level::Pass,
            format!(
                "All {} runs are valid measurements (the load generator was never saturated).",
                every.len()
            ),
        ));
    }
    for v in &s.variants {
        for (expr, met, of, _) in threshold_counts(v, runs) {
            let t = loadlab_metrics::result::ThresholdResult {
                expr: expr.clone(),
                actual: None,
                ok: met == of,
            };
            let sentence = threshold_sentence(&t);
            let head = sentence.split(':').next().unwrap_or(&sentence);
            verdicts.push(Verdict::new(
                if met == of { Level::Pass } else { Level::Fail },
                format!("`{}`: {head} in {met}/{of} runs.", v.name),
            ));
        }
        if runs.is_empty() && v.thresholds_failed > 0 {
            verdicts.push(Verdict::new(
                Level::Fail,
                format!(
                    "`{}`: thresholds failed in {}/{} runs.",
                    v.name,
                    v.thresholds_failed,
                    v.runs.len()
                ),
            ));
        }
    }
    verdicts.extend(comparison_verdicts(&s.comparisons, s.alpha));
    if let Some(sw) = &s.sweep {
        let unit = if sw.parameter == "vus" {
            "VUs"
        } else {
            "req/s offered"
        };
        match sw.knee {
            Some(k) => verdicts.push(Verdict::new(
                Level::Info,
                format!("Throughput stops growing in proportion to the load at about {k:.0} {unit} (knee of the throughput curve)."),
            )),
            None => verdicts.push(Verdict::new(
                Level::Info,
                "No knee in the throughput curve: throughput kept growing with the load over the range tested.",
            )),
        }
        if let Some(k) = sw.latency_knee {
            verdicts.push(Verdict::new(
                Level::Info,
                format!("p95 latency starts to climb steeply at about {k:.0} {unit}."),
            ));
        }
        if let Some(u) = &sw.usl {
            if let (Some(n), Some(peak)) = (u.n_star, u.peak) {
                verdicts.push(Verdict::new(
                    if u.poor_fit { Level::Warn } else { Level::Info },
                    format!(
                        "The Universal Scalability Law predicts a peak of {} at about {n:.0} VUs (R² = {:.2}{}).",
                        format_rate(peak),
                        u.r2,
                        if u.poor_fit { ", a poor fit: do not rely on it" } else { "" }
                    ),
                ));
            }
        }
    }
    for v in s.variants.iter().filter(|v| v.unstable) {
        let cv = |m: &str| v.metrics.get(m).map(|s| s.cv * 100.0).unwrap_or(0.0);
        verdicts.push(Verdict::new(
            Level::Warn,
            format!(
                "`{}` is unstable: its runs disagree (CV of throughput {:.1}%, of p50 {:.1}%, ≥ 10%), so one number does not describe it; look at the per-run dot plot.",
                v.name,
                cv("requests.rate"),
                cv("latency_ms.p50")
            ),
        ));
    }
    for w in &s.warnings {
        verdicts.push(Verdict::new(
            Level::Warn,
            format!("{}.", capitalize(w.trim_end_matches('.'))),
        ));
    }
    if let Some(r) = every.first() {
        verdicts.extend(caveats(r).into_iter().filter(|c| c.level == Level::Info));
    }

    let kind = if s.sweep.is_some() {
        DocKind::Sweep
    } else {
        DocKind::Study
    };
    let mut sections = vec![
        study_summary(s),
        study_method(s, runs, &every, plan),
        multi_environment(&every),
        study_results(s, runs),
    ];
    sections.push(study_charts(s, runs));
    if let Some(sec) = sweep_section(s) {
        sections.push(sec);
    }
    if !s.comparisons.is_empty() {
        let mut sec = Section::new("comparison", "Comparison");
        sec.push(Block::Table(comparison_table(&s.comparisons)));
        if !s.degradation.is_empty() {
            sec.push(Block::Heading(
                "Degradation factors (ratio of medians)".into(),
            ));
            let mut t = Table::new(&[
                "baseline → variant",
                ">load",
                ">throughput",
                ">mean",
                ">p50",
                ">p95",
                ">p99",
            ]);
            for d in &s.degradation {
                let f = |m: &str| {
                    d.factors
                        .get(m)
                        .map(|x| format!("{x:.2}×"))
                        .unwrap_or_default()
                };
                t.row(cells![
                    format!("{} → {}", d.baseline, d.variant),
                    d.load_factor
                        .map(|x| format!("{x:.2}×"))
                        .unwrap_or_default(),
                    f("requests.rate"),
                    f("latency_ms.mean"),
                    f("latency_ms.p50"),
                    f("latency_ms.p95"),
                    f("latency_ms.p99")
                ]);
            }
            sec.push(Block::Table(t));
        }
        sections.push(sec);
    }
    if let Some(sec) = multi_errors(s, runs) {
        sections.push(sec);
    }
    if let Some(sec) = study_thresholds(s, runs) {
        sections.push(sec);
    }
    ReportDoc {
        kind,
        title: format!(
            "{}: {} report",
            s.name,
            if kind == DocKind::Sweep {
                "sweep"
            } else {
                "study"
            }
        ),
        subtitle: format!(
            "{} variant{} × {} runs · {} · started {} · loadlab {}",
            s.variants.len(),
            if s.variants.len() == 1 { "" } else { "s" },
            s.repeat,
            s.id,
            s.started_at,
            s.tool_version
        ),
        verdicts,
        sections,
        tool_version: s.tool_version.clone(),
    }
}

fn load_level_words(v: &VariantStats) -> String {
    match &v.load {
        Some(l) if l.kind == "vus" => format!("{:.0} VUs", l.value),
        Some(l) => format_rate(l.value),
        None => String::new(),
    }
}

fn study_summary(s: &StudyResult) -> Section {
    let mut sec = Section::new("summary", "Summary");
    sec.push(Block::Text(format!(
        "**What was tested:** scenario `{}`{}, {} variant{} ({}) × {} repetitions in {} order. Each run is one observation; the table shows the median across runs with its 95% confidence interval.",
        s.name,
        s.scenario_file.as_deref().map(|f| format!(" (`{f}`)")).unwrap_or_default(),
        s.variants.len(),
        if s.variants.len() == 1 { "" } else { "s" },
        s.variants.iter().map(|v| format!("`{}`", v.name)).collect::<Vec<_>>().join(", "),
        s.repeat,
        s.order
    )));
    let mut t = Table::new(&[
        "variant",
        "load",
        ">runs",
        ">throughput",
        ">error rate",
        ">p50",
        ">p95 [95% CI]",
        ">p99",
        "stable",
    ]);
    for v in &s.variants {
        let m = |k: &str| v.metrics.get(k);
        let med = |k: &str| {
            m(k).map(|x| fmt(metric_unit(k), x.median))
                .unwrap_or_default()
        };
        t.row(vec![
            format!("`{}`", v.name).into(),
            load_level_words(v).into(),
            format!(
                "{}{}",
                v.runs.len(),
                if v.excluded_runs.is_empty() {
                    String::new()
                } else {
                    format!(" (+{} excluded)", v.excluded_runs.len())
                }
            )
            .into(),
            med("requests.rate").into(),
            med("errors.rate").into(),
            med("latency_ms.p50").into(),
            m("latency_ms.p95")
                .map(|x| median_ci_words(Unit::Millis, x))
                .unwrap_or_default()
                .into(),
            med("latency_ms.p99").into(),
            if v.unstable {
                Cell::level("unstable", Level::Warn)
            } else {
                Cell::level("yes", Level::Pass)
            },
        ]);
    }
    sec.push(Block::Table(t.with_note(
        "Medians across runs; [n<6]: fewer than 6 runs, too few for a distribution-free 95% interval.",
    )));
    sec
}

pub fn study_methods(s_alpha: f64, equivalence: f64) -> Vec<String> {
    vec![
        "Each run is one observation: a metric (a run's p95, its throughput) is one number per run, and statistics are taken across runs; percentiles are never averaged across requests.".to_string(),
        "Median with its distribution-free 95% confidence interval (binomial order statistics; needs at least 6 runs); mean with its Student-t 95% interval; CV = standard deviation / mean, a variant is unstable when the CV of throughput or p50 is 10% or more.".to_string(),
        format!("Comparisons: two-sided Mann–Whitney U test per metric, Holm's correction across the metrics of each pair, significance level α = {s_alpha}; the change is the Hodges–Lehmann estimate of variant/baseline − 1 on log values with Moses' 95% interval; equivalence band ±{:.0}%.", equivalence * 100.0),
        "Sweeps: the knee is found with Kneedle on the median throughput curve (and the p95 curve); the Universal Scalability Law is fitted to every run's (VUs, throughput) by non-linear least squares.".to_string(),
    ]
}

fn study_method(
    s: &StudyResult,
    runs: &Runs,
    every: &[&RunResult],
    plan: Option<&PlannedLoad>,
) -> Section {
    let mut sec = Section::new("method", "Method");
    let mut facts = vec![(
        "Scenario".to_string(),
        match &s.scenario_file {
            Some(f) => format!("`{}` (from `{f}`)", s.name),
            None => format!("`{}`", s.name),
        },
    )];
    for v in &s.variants {
        let load = v
            .runs
            .first()
            .and_then(|id| runs.get(id))
            .map(|r| load_words(&r.load));
        facts.push((
            format!("Variant `{}`", v.name),
            load.unwrap_or_else(|| load_level_words(v)),
        ));
    }
    if let Some(r) = every.first() {
        facts.push(("Run length".to_string(), duration_words(r)));
    }
    facts.push((
        "Repetitions".to_string(),
        format!(
            "{} per variant, {} order, {} cool-down between runs",
            s.repeat,
            s.order,
            format_secs(s.cooldown_s)
        ),
    ));
    facts.push((
        "Started".to_string(),
        format!("{} (finished {})", s.started_at, s.finished_at),
    ));
    facts.push(("Tool".to_string(), format!("loadlab {}", s.tool_version)));
    sec.push(Block::Facts(facts));
    if let Some(p) = plan {
        sec.push(Block::Chart(plan_chart(
            p,
            every.first().map(|r| r.warmup_s).unwrap_or(0.0),
        )));
    }
    sec.push(Block::Heading("Statistics".into()));
    sec.push(Block::List(study_methods(s.alpha, s.equivalence)));
    sec.push(Block::Heading("Measurement".into()));
    sec.push(Block::List(measurement_methods(
        every
            .first()
            .map(|r| r.load.model.as_str())
            .unwrap_or("closed"),
    )));
    sec
}

/// Environment of a set of runs: the machine, the targets, the generator's worst CPU use.
pub fn multi_environment(every: &[&RunResult]) -> Section {
    let mut sec = Section::new("environment", "Environment");
    let mut facts = Vec::new();
    let mut targets: Vec<&str> = every.iter().filter_map(|r| r.target.as_deref()).collect();
    targets.sort();
    targets.dedup();
    facts.push((
        "Target".to_string(),
        if targets.is_empty() {
            "not recorded".to_string()
        } else {
            targets
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", ")
        },
    ));
    match every.iter().find_map(|r| r.environment.as_ref()) {
        Some(e) => facts.extend(environment_facts(e)),
        None => facts.push(("Machine".to_string(), "not recorded".to_string())),
    }
    if let Some(worst) = every
        .iter()
        .max_by(|a, b| a.generator.cpu_percent.total_cmp(&b.generator.cpu_percent))
    {
        facts.push((
            "Load generator (busiest run)".to_string(),
            generator_words(worst),
        ));
    }
    let saturated = every.iter().filter(|r| r.generator.saturated).count();
    facts.push((
        "Generator saturated".to_string(),
        format!("in {saturated} of {} runs", every.len()),
    ));
    sec.push(Block::Facts(facts));
    let mut notes = Vec::new();
    for r in every.iter().filter(|r| !r.valid) {
        notes.push(Verdict::new(
            Level::Fail,
            format!(
                "Run started {} is invalid: {}.",
                r.started_at,
                r.invalid_reasons.join("; ")
            ),
        ));
    }
    if targets
        .iter()
        .any(|t| t.contains("127.0.0.1") || t.contains("localhost"))
    {
        notes.push(Verdict::new(
            Level::Info,
            "The target runs on the same machine as the generator: they share its CPUs.",
        ));
    }
    if !notes.is_empty() {
        sec.push(Block::Notes(notes));
    }
    sec
}

fn study_results(s: &StudyResult, runs: &Runs) -> Section {
    let mut sec = Section::new("results", "Results per variant");
    for v in &s.variants {
        sec.push(Block::Heading(format!(
            "`{}`{}",
            v.name,
            if v.unstable { " (unstable)" } else { "" }
        )));
        let mut t = Table::new(&METRIC_COLUMNS);
        for m in MAIN_METRICS {
            if let Some(st) = v.metrics.get(m) {
                t.row(metric_row(m, st));
            }
        }
        sec.push(Block::Table(t));
        let scoped: Vec<(&String, &MetricStats)> = v
            .metrics
            .iter()
            .filter(|(k, _)| k.starts_with("groups.") || k.starts_with("steps."))
            .collect();
        if !scoped.is_empty() {
            let mut t = Table::new(&METRIC_COLUMNS);
            for (k, st) in scoped {
                t.row(metric_row(k, st));
            }
            sec.push(Block::Table(t.with_note(
                "Per group and per step: each run's p95, summarised over all the runs of the variant.",
            )));
        }
        let rs = variant_runs(v, runs);
        if !rs.is_empty() {
            let mut t = Table::new(&[
                ">run",
                "started",
                ">requests",
                ">throughput",
                ">failed",
                ">p50",
                ">p95",
                ">p99",
                "valid",
                "thresholds",
            ]);
            for (i, r) in rs.iter().enumerate() {
                let passed = r.thresholds.iter().filter(|t| t.ok).count();
                t.row(vec![
                    (i + 1).to_string().into(),
                    r.started_at.clone().into(),
                    r.requests.total.to_string().into(),
                    format_rate(r.requests.rate).into(),
                    error_share(r.requests.failed, r.requests.total).into(),
                    format_ms(r.latency_ms.p50).into(),
                    format_ms(r.latency_ms.p95).into(),
                    format_ms(r.latency_ms.p99).into(),
                    if r.valid {
                        Cell::level("yes", Level::Pass)
                    } else {
                        Cell::level("no", Level::Fail)
                    },
                    if r.thresholds.is_empty() {
                        "".into()
                    } else {
                        Cell::level(
                            format!("{passed}/{}", r.thresholds.len()),
                            if passed == r.thresholds.len() {
                                Level::Pass
                            } else {
                                Level::Fail
                            },
                        )
                    },
                ]);
            }
            sec.push(Block::Table(t));
        }
    }
    sec
}

/// A deterministic spread of the dots of one category (no randomness: golden files).
fn jitter(i: usize, n: usize) -> f64 {
    if n <= 1 {
        return 0.0;
    }
    let width = 0.36;
    -width / 2.0 + width * (i as f64) / ((n - 1) as f64)
}

fn dot_plot(s: &StudyResult, metric: &str, id: &str, title: &str) -> Chart {
    let unit = metric_unit(metric);
    let names: Vec<String> = s.variants.iter().map(|v| v.name.clone()).collect();
    let mut c = Chart::new(
        id,
        title,
        Axis::categories("variant", names),
        Axis::linear(&metric_words(metric), unit),
    )
    .describe(format!(
        "Each dot is one run's {}; the bar is the median with its 95% confidence interval. Spread-out dots mean runs disagree.",
        metric_words(metric)
    ))
    .height(280);
    let mut medians = Vec::new();
    let mut cis = Vec::new();
    for (i, v) in s.variants.iter().enumerate() {
        if let Some(m) = v.metrics.get(metric) {
            let pts = m
                .values
                .iter()
                .enumerate()
                .map(|(j, y)| (i as f64 + jitter(j, m.values.len()), *y))
                .collect();
            let mut ser = Series::new("", SeriesKind::Points, i, pts);
            ser.name = format!("{} runs", v.name);
            c = c.series(ser);
            medians.push((i as f64 + 0.3, m.median));
            cis.push(match m.median_ci {
                Some([lo, hi]) => (lo, hi),
                None => (m.median, m.median),
            });
        }
    }
    c.series(Series::new("median [95% CI]", SeriesKind::Points, 7, medians).with_intervals(cis))
}

/// The run whose p95 is the median of its variant: the one drawn in time series.
fn representative<'a>(v: &VariantStats, runs: &'a Runs) -> Option<&'a RunResult> {
    let rs = variant_runs(v, runs);
    let m = median(&rs.iter().map(|r| r.latency_ms.p95).collect::<Vec<_>>());
    rs.into_iter().min_by(|a, b| {
        (a.latency_ms.p95 - m)
            .abs()
            .total_cmp(&(b.latency_ms.p95 - m).abs())
    })
}

fn study_charts(s: &StudyResult, runs: &Runs) -> Section {
    let mut sec = Section::new("charts", "Charts");
    sec.push(Block::Chart(dot_plot(
        s,
        "latency_ms.p95",
        "p95-per-run",
        "p95 latency of every run, per variant",
    )));
    sec.push(Block::Chart(dot_plot(
        s,
        "requests.rate",
        "throughput-per-run",
        "Throughput of every run, per variant",
    )));
    let reps: Vec<(usize, &VariantStats, &RunResult)> = s
        .variants
        .iter()
        .enumerate()
        .filter_map(|(i, v)| representative(v, runs).map(|r| (i, v, r)))
        .collect();
    if !reps.is_empty() {
        let time = || Axis::linear("time since start (s)", Unit::Seconds);
        let warm = reps[0].2.warmup_s;
        let band = |c: &mut Chart| {
            if warm > 0.0 {
                c.bands.push(crate::chart::Band {
                    from: 0.0,
                    to: warm,
                    label: "warm-up (excluded)".into(),
                });
            }
        };
        let mut lat = Chart::new("latency-over-time", "Latency percentiles over time (median run of each variant)", time(), Axis::linear("latency", Unit::Millis))
            .describe("p95 (solid) and p99 (dashed) of each 1-second slice, for the run whose p95 is the median of its variant.");
        let mut tput = Chart::new(
            "throughput-over-time",
            "Throughput and errors over time (median run of each variant)",
            time(),
            Axis::linear("requests/s", Unit::PerSecond),
        )
        .describe("Completed requests per second (solid) and failed requests per second (dashed).");
        let closed = reps[0].2.load.model == "closed";
        let mut active = Chart::new(
            "active-over-time",
            if closed { "Active virtual users over time" } else { "Requests in flight over time" },
            time(),
            Axis::linear(if closed { "active VUs" } else { "in flight" }, Unit::Count),
        )
        .describe("Active VUs (closed model) or requests in flight (open model) at the end of each slice.");
        for (i, v, r) in &reps {
            let iv = r.intervals.iter().filter(|x| x.requests > 0);
            lat = lat
                .series(Series::new(
                    &format!("{} p95", v.name),
                    SeriesKind::Line,
                    *i,
                    iv.clone().map(|x| (x.t as f64, x.latency_ms.p95)).collect(),
                ))
                .series(
                    Series::new(
                        &format!("{} p99", v.name),
                        SeriesKind::Line,
                        *i,
                        iv.map(|x| (x.t as f64, x.latency_ms.p99)).collect(),
                    )
                    .dashed(),
                );
            tput = tput
                .series(Series::new(
                    &format!("{} ok/s", v.name),
                    SeriesKind::Line,
                    *i,
                    r.intervals
                        .iter()
                        .map(|x| {
                            (
                                x.t as f64,
                                x.rate * (x.requests - x.failed.min(x.requests)) as f64
                                    / x.requests.max(1) as f64,
                            )
                        })
                        .collect(),
                ))
                .series(
                    Series::new(
                        &format!("{} failed/s", v.name),
                        SeriesKind::Line,
                        *i,
                        r.intervals
                            .iter()
                            .map(|x| {
                                (
                                    x.t as f64,
                                    x.rate * x.failed as f64 / x.requests.max(1) as f64,
                                )
                            })
                            .collect(),
                    )
                    .dashed(),
                );
            active = active.series(Series::new(
                &v.name,
                SeriesKind::Line,
                *i,
                r.intervals
                    .iter()
                    .map(|x| (x.t as f64, x.active as f64))
                    .collect(),
            ));
        }
        band(&mut lat);
        band(&mut tput);
        band(&mut active);
        sec.push(Block::Chart(lat));
        sec.push(Block::Chart(tput));
        sec.push(Block::Chart(active));
        let mut dist = Vec::new();
        for v in &s.variants {
            let mut merged: Option<loadlab_metrics::LatencyHistogram> = None;
            for r in variant_runs(v, runs) {
                if let Some(h) = decode_histogram(&r.histograms.latency) {
                    match &mut merged {
                        Some(m) => {
                            let _ = m.add(&h);
                        }
                        None => merged = Some(h),
                    }
                }
            }
            if let Some(h) = merged {
                let enc = loadlab_metrics::result::encode_histogram(&h);
                dist.push((v.name.clone(), crate::run_doc::percentile_curve(&enc)));
            }
        }
        let mut c = crate::run_doc::distribution_chart(dist, "latency-distribution");
        c.description = "Latency at each percentile of all the measured requests of a variant (its runs' HDR histograms merged exactly): the right-hand end is the tail.".into();
        sec.push(Block::Chart(c));
    }
    sec
}

fn usl_curve(u: &loadlab_analysis::study::UslResult, max_n: f64) -> Vec<(f64, f64)> {
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

fn sweep_section(s: &StudyResult) -> Option<Section> {
    let sw = s.sweep.as_ref()?;
    let mut sec = Section::new("sweep", "Sweep");
    let (label, unit) = if sw.parameter == "vus" {
        ("virtual users", Unit::Count)
    } else {
        ("offered rate (req/s)", Unit::PerSecond)
    };
    let mut all = Vec::new();
    for p in &sw.points {
        if let Some(v) = s.variants.iter().find(|v| v.name == p.variant) {
            if let Some(m) = v.metrics.get("requests.rate") {
                all.extend(m.values.iter().map(|y| (p.value, *y)));
            }
        }
    }
    let mut c = Chart::new("sweep-throughput", "Throughput against load", Axis::linear(label, unit), Axis::linear("throughput", Unit::PerSecond))
        .describe("Median throughput at each load level (line), every run (dots), the knee (dashed) and the Universal Scalability Law fit.")
        .series(Series::new("median throughput", SeriesKind::Line, 0, sw.points.iter().map(|p| (p.value, p.throughput)).collect()))
        .series(Series::new("runs", SeriesKind::Points, 5, all));
    if let Some(u) = &sw.usl {
        let max_n = sw.points.iter().map(|p| p.value).fold(1.0, f64::max);
        c = c.series(
            Series::new(
                &format!("USL fit (R² {:.2})", u.r2),
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
    sec.push(Block::Chart(c));
    let mut c = Chart::new("sweep-latency", "Latency against load", Axis::linear(label, unit), Axis::linear("latency (median of runs)", Unit::Millis))
        .describe("Median p50, p95 and p99 at each load level: where the lines bend upwards the target queues.")
        .series(Series::new("p50", SeriesKind::Line, 2, sw.points.iter().map(|p| (p.value, p.p50)).collect()))
        .series(Series::new("p95", SeriesKind::Line, 0, sw.points.iter().map(|p| (p.value, p.p95)).collect()))
        .series(Series::new("p99", SeriesKind::Line, 1, sw.points.iter().map(|p| (p.value, p.p99)).collect()));
    if let Some(k) = sw.latency_knee {
        c = c.rule(Rule::x(k, format!("latency knee ≈ {k:.0}"), Level::Warn));
    }
    sec.push(Block::Chart(c));
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
    sec.push(Block::Table(
        t.with_note("Medians across the runs of each level."),
    ));
    if let Some(u) = &sw.usl {
        sec.push(Block::Facts(vec![
            ("USL σ (contention)".into(), format!("{:.4}", u.sigma)),
            ("USL κ (coherency)".into(), format!("{:.6}", u.kappa)),
            ("USL λ (throughput of one VU)".into(), format_rate(u.lambda)),
            (
                "Peak".into(),
                match (u.n_star, u.peak) {
                    (Some(n), Some(p)) => format!("{} at N* ≈ {n:.1} VUs", format_rate(p)),
                    _ => "none (κ = 0: no retrograde scaling in the range)".into(),
                },
            ),
            (
                "Fit".into(),
                format!(
                    "R² = {:.3}{}",
                    u.r2,
                    if u.poor_fit {
                        " (poor: do not trust N*)"
                    } else {
                        ""
                    }
                ),
            ),
        ]));
    }
    Some(sec)
}

fn multi_errors(s: &StudyResult, runs: &Runs) -> Option<Section> {
    let mut rows: Vec<(String, String, u64, u64, String)> = Vec::new();
    for v in &s.variants {
        let rs = variant_runs(v, runs);
        let total: u64 = rs.iter().map(|r| r.requests.total).sum();
        let mut by_kind: BTreeMap<String, (u64, String)> = BTreeMap::new();
        for r in rs {
            for (k, n) in &r.errors {
                let e = by_kind.entry(k.clone()).or_default();
                e.0 += n;
                if e.1.is_empty() {
                    e.1 = r.error_hints.get(k).cloned().unwrap_or_default();
                }
            }
        }
        for (k, (n, hint)) in by_kind {
            rows.push((v.name.clone(), k, n, total, hint));
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut sec = Section::new("errors", "Errors");
    let mut t = Table::new(&[
        "variant",
        "kind",
        ">count",
        ">share of requests",
        "what it means",
    ]);
    for (v, k, n, total, hint) in rows {
        t.row(cells![
            format!("`{v}`"),
            format!("`{k}`"),
            n.to_string(),
            error_share(n, total),
            hint
        ]);
    }
    sec.push(Block::Table(
        t.with_note("Over all the runs of each variant."),
    ));
    Some(sec)
}

fn study_thresholds(s: &StudyResult, runs: &Runs) -> Option<Section> {
    let mut t = Table::new(&[
        "variant",
        "threshold",
        ">met in",
        ">actual (median)",
        ">actual (min – max)",
    ]);
    for v in &s.variants {
        for (expr, met, of, actual) in threshold_counts(v, runs) {
            let unit = crate::format::Unit::of_threshold(&expr);
            let (mn, mx) = actual
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                    (a.min(*x), b.max(*x))
                });
            t.row(vec![
                format!("`{}`", v.name).into(),
                format!("`{expr}`").into(),
                Cell::level(
                    format!("{met}/{of} runs"),
                    if met == of { Level::Pass } else { Level::Fail },
                ),
                if actual.is_empty() {
                    "no data".to_string()
                } else {
                    unit.format(median(&actual))
                }
                .into(),
                if actual.is_empty() {
                    String::new()
                } else {
                    format!("{} – {}", unit.format(mn), unit.format(mx))
                }
                .into(),
            ]);
        }
    }
    if t.rows.is_empty() {
        return None;
    }
    let mut sec = Section::new("thresholds", "Thresholds");
    sec.push(Block::Table(t));
    Some(sec)
}

/// Builds the report of a capacity search.
pub fn capacity_report(c: &CapacityResult, runs: &Runs) -> ReportDoc {
    let mut verdicts = Vec::new();
    match c.max_rate {
        Some(r) => verdicts.push(Verdict::new(
            Level::Pass,
            format!(
                "Capacity: {} meets the SLO{}{}.",
                format_rate(r),
                if c.settings.confirm > 0 {
                    format!(" (confirmed by {} repeated runs)", c.settings.confirm)
                } else {
                    String::new()
                },
                match c.bracket[1] {
                    Some(hi) => format!("; {} does not", format_rate(hi)),
                    None => " — no rate tried failed, the capacity may be higher".to_string(),
                }
            ),
        )),
        None => verdicts.push(Verdict::new(Level::Fail, "No rate tried met the SLO.")),
    }
    if let Some(hi) = c.bracket[1] {
        if let Some(step) = c
            .steps
            .iter()
            .find(|s| !s.passed && (s.rate - hi).abs() < 1e-9)
        {
            if !step.reasons.is_empty() {
                verdicts.push(Verdict::new(
                    Level::Info,
                    format!(
                        "At {} the SLO failed: {}.",
                        format_rate(hi),
                        step.reasons.join("; ")
                    ),
                ));
            }
        }
    }
    if c.interrupted {
        verdicts.push(Verdict::new(
            Level::Warn,
            "The search was interrupted before it converged.",
        ));
    }
    for w in &c.warnings {
        verdicts.push(Verdict::new(
            Level::Warn,
            format!("{}.", capitalize(w.trim_end_matches('.'))),
        ));
    }
    let every: Vec<&RunResult> = c.steps.iter().filter_map(|s| runs.get(&s.run)).collect();
    let mut summary = Section::new("summary", "Summary");
    summary.push(Block::Text(format!(
        "**What was tested:** the largest arrival rate (open model) at which scenario `{}` meets its SLO, by doubling then bisecting the rate, {} per step.",
        c.name,
        format_secs(c.settings.hold_s)
    )));
    let mut t = Table::new(&["", ">value"]);
    t.row(cells![
        "capacity (largest passing rate)",
        c.max_rate.map(format_rate).unwrap_or_else(|| "none".into())
    ]);
    t.row(cells![
        "lowest failing rate",
        c.bracket[1]
            .map(format_rate)
            .unwrap_or_else(|| "none".into())
    ]);
    t.row(cells!["steps run", c.steps.len().to_string()]);
    summary.push(Block::Table(t));
    let mut method = Section::new("method", "Method");
    method.push(Block::Facts(vec![
        (
            "Scenario".into(),
            format!(
                "`{}`{}",
                c.name,
                c.scenario_file
                    .as_deref()
                    .map(|f| format!(" (from `{f}`)"))
                    .unwrap_or_default()
            ),
        ),
        ("Start rate".into(), format_rate(c.settings.start)),
        ("Highest rate allowed".into(), format_rate(c.settings.max)),
        (
            "Each step".into(),
            format!(
                "{} warm-up, then {} measured",
                format_secs(c.settings.warmup_s),
                format_secs(c.settings.hold_s)
            ),
        ),
        (
            "Precision".into(),
            format!(
                "bisection stops when the bracket is within {:.0}%",
                c.settings.precision * 100.0
            ),
        ),
        (
            "Confirmation".into(),
            format!("{} runs at the answer, all must pass", c.settings.confirm),
        ),
        (
            "Started".into(),
            format!("{} (finished {})", c.started_at, c.finished_at),
        ),
        ("Tool".into(), format!("loadlab {}", c.tool_version)),
    ]));
    method.push(Block::Heading("SLO (every step must meet all)".into()));
    method.push(Block::List(
        c.slo.iter().map(|s| format!("`{s}`")).collect(),
    ));
    let mut steps = Section::new("steps", "Search steps");
    let idx = |i: usize| (i + 1) as f64;
    let mut chart = Chart::new("capacity-steps", "Capacity search steps", Axis::linear("step", Unit::Count), Axis::linear("offered rate", Unit::PerSecond))
        .describe("Each run of the search: the offered rate, passed (green) or failed (red); the dashed line is the capacity found.")
        .series(Series::new("passed", SeriesKind::Points, 2, c.steps.iter().enumerate().filter(|(_, s)| s.passed).map(|(i, s)| (idx(i), s.rate)).collect()))
        .series(Series::new("failed", SeriesKind::Points, 1, c.steps.iter().enumerate().filter(|(_, s)| !s.passed).map(|(i, s)| (idx(i), s.rate)).collect()))
        .series(Series::new("achieved", SeriesKind::Line, 6, c.steps.iter().enumerate().map(|(i, s)| (idx(i), s.achieved_rate)).collect()).dashed());
    if let Some(r) = c.max_rate {
        chart = chart.rule(Rule::y(
            r,
            format!("capacity {}", format_rate(r)),
            Level::Pass,
        ));
    }
    steps.push(Block::Chart(chart));
    let mut by_rate: Vec<&loadlab_analysis::capacity::CapacityStep> = c.steps.iter().collect();
    by_rate.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    steps.push(Block::Chart(
        Chart::new(
            "capacity-latency",
            "p95 latency against offered rate",
            Axis::linear("offered rate", Unit::PerSecond),
            Axis::linear("p95 latency", Unit::Millis),
        )
        .describe(
            "p95 of each step against its offered rate: the SLO fails where the curve bends up.",
        )
        .series(Series::new(
            "p95",
            SeriesKind::Line,
            0,
            by_rate.iter().map(|s| (s.rate, s.p95_ms)).collect(),
        )),
    ));
    let mut t = Table::new(&[
        ">#",
        "phase",
        ">offered",
        ">achieved",
        ">p95",
        ">errors",
        "result",
        "why it failed",
    ]);
    for (i, s) in c.steps.iter().enumerate() {
        t.row(vec![
            (i + 1).to_string().into(),
            s.phase.clone().into(),
            format_rate(s.rate).into(),
            format_rate(s.achieved_rate).into(),
            format_ms(s.p95_ms).into(),
            format_fraction(s.error_rate).into(),
            if s.retried {
                Cell::level("retried", Level::Warn)
            } else if s.passed {
                Cell::level("pass", Level::Pass)
            } else {
                Cell::level("fail", Level::Fail)
            },
            if s.retried {
                format!("generator saturated, not counted; {}", s.reasons.join("; ")).into()
            } else {
                s.reasons.join("; ").into()
            },
        ]);
    }
    steps.push(Block::Table(t));
    let sections = vec![summary, method, multi_environment(&every), steps];
    ReportDoc {
        kind: DocKind::Capacity,
        title: format!("{}: capacity report", c.name),
        subtitle: format!(
            "capacity search · {} · started {} · loadlab {}",
            c.id, c.started_at, c.tool_version
        ),
        verdicts,
        sections,
        tool_version: c.tool_version.clone(),
    }
}

/// Builds the report of a `loadlab compare`.
pub fn compare_report(c: &CompareResult) -> ReportDoc {
    let mut verdicts = Vec::new();
    if !c.regressions.is_empty() {
        verdicts.push(Verdict::new(
            Level::Fail,
            format!(
                "Regression: {} significantly worse{}.",
                c.regressions
                    .iter()
                    .map(|m| metric_words(m))
                    .collect::<Vec<_>>()
                    .join(", "),
                c.fail_on_regression
                    .map(|b| format!(" by more than {:.0}%", b * 100.0))
                    .unwrap_or_default()
            ),
        ));
    } else if c.fail_on_regression.is_some() {
        verdicts.push(Verdict::new(
            Level::Pass,
            "No regression beyond the allowed bound.",
        ));
    }
    verdicts.extend(comparison_verdicts(&c.comparisons, c.alpha));
    for w in &c.warnings {
        verdicts.push(Verdict::new(
            Level::Warn,
            format!("{}.", capitalize(w.trim_end_matches('.'))),
        ));
    }
    let mut summary = Section::new("summary", "Summary");
    summary.push(Block::Text(format!(
        "**What was compared:** {} `{}` ({}, {} run{}) as the baseline against {} `{}` ({}, {} run{}).",
        c.baseline.kind, c.baseline.label, c.baseline.id, c.baseline.runs, if c.baseline.runs == 1 { "" } else { "s" },
        c.variant.kind, c.variant.label, c.variant.id, c.variant.runs, if c.variant.runs == 1 { "" } else { "s" },
    )));
    summary.push(Block::Table(comparison_table(&c.comparisons)));
    let mut method = Section::new("method", "Method");
    method.push(Block::List(
        study_methods(c.alpha, c.equivalence)[..3].to_vec(),
    ));
    let names = [c.baseline.label.clone(), c.variant.label.clone()];
    let mut chart = Chart::new("comparison-change", "Change of each metric, with its 95% CI", Axis::categories("metric", c.comparisons.iter().map(|x| metric_words(&x.metric)).collect()), Axis::linear("variant / baseline − 1", Unit::Fraction))
        .describe(format!("Estimated change of `{}` relative to `{}` per metric; an interval that crosses 0 is not a significant difference.", names[1], names[0]))
        .height(260);
    let (pts, ivs): (Vec<_>, Vec<_>) = c
        .comparisons
        .iter()
        .enumerate()
        .filter_map(|(i, x)| {
            x.change.map(|ch| {
                (
                    (i as f64, ch),
                    x.change_ci.map(|[a, b]| (a, b)).unwrap_or((ch, ch)),
                )
            })
        })
        .unzip();
    chart = chart
        .series(Series::new("change", SeriesKind::Points, 0, pts).with_intervals(ivs))
        .rule(Rule::y(0.0, "no change", Level::Info));
    summary.push(Block::Chart(chart));
    ReportDoc {
        kind: DocKind::Comparison,
        title: format!(
            "{} vs {}: comparison report",
            c.variant.label, c.baseline.label
        ),
        subtitle: format!(
            "comparison · {} → {} · loadlab {}",
            c.baseline.id, c.variant.id, c.tool_version
        ),
        verdicts,
        sections: vec![summary, method],
        tool_version: c.tool_version.clone(),
    }
}
