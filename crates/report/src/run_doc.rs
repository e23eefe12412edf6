//! A single run → [`ReportDoc`].

use crate::chart::{Axis, Band, Chart, Rule, Series, SeriesKind, Unit};
use crate::doc::{Block, Cell, DocKind, Level, ReportDoc, Section, Table, Verdict};
use crate::format::{format_ms, format_rate, format_secs};
use crate::words::*;
use loadlab_metrics::result::{decode_histogram, LatencySummary, RunResult};
use serde::Serialize;

/// The planned load over time, from the scenario (the run record keeps only its peak).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedLoad {
    /// `true`: virtual users (closed model); `false`: arrivals per second (open model).
    pub vus: bool,
    /// `(seconds since start, VUs or arrivals/s)`, warm-up included.
    pub points: Vec<(f64, f64)>,
}

/// Builds the report of one run. `plan` adds the planned-load chart to the method section.
pub fn run_report(r: &RunResult, plan: Option<&PlannedLoad>) -> ReportDoc {
    let mut sections = vec![summary(r), method(r, plan), environment(r), results(r)];
    sections.push(charts(r, plan));
    if !r.errors.is_empty() {
        sections.push(errors(r));
    }
    if !r.thresholds.is_empty() {
        sections.push(thresholds(r));
    }
    ReportDoc {
        kind: DocKind::Run,
        title: format!("{}: load test report", r.name),
        subtitle: format!(
            "single run · started {} · {} · loadlab {}",
            r.started_at,
            r.target.as_deref().unwrap_or("no target recorded"),
            r.tool_version
        ),
        verdicts: run_verdicts(r),
        sections,
        tool_version: r.tool_version.clone(),
    }
}

/// The verdict sentences of a run, most important first.
pub fn run_verdicts(r: &RunResult) -> Vec<Verdict> {
    let mut v = Vec::new();
    if !r.valid {
        v.push(Verdict::new(
            Level::Fail,
            format!("Not a valid measurement: {}.", r.invalid_reasons.join("; ")),
        ));
    }
    if r.interrupted {
        v.push(Verdict::new(
            Level::Warn,
            format!(
                "The run was interrupted: the numbers cover {} of the {} planned.",
                format_secs(r.duration_s + r.warmup_s),
                format_secs(r.load.planned_duration_s)
            ),
        ));
    }
    let passed = r.thresholds.iter().filter(|t| t.ok).count();
    if !r.thresholds.is_empty() {
        if passed == r.thresholds.len() {
            v.push(Verdict::new(
                Level::Pass,
                format!(
                    "All {} threshold{} met.",
                    r.thresholds.len(),
                    if r.thresholds.len() == 1 { "" } else { "s" }
                ),
            ));
        } else {
            v.push(Verdict::new(
                Level::Fail,
                format!(
                    "{} of {} thresholds missed.",
                    r.thresholds.len() - passed,
                    r.thresholds.len()
                ),
            ));
        }
        for t in &r.thresholds {
            v.push(Verdict::new(
                if t.ok { Level::Pass } else { Level::Fail },
                format!("{}.", threshold_sentence(t)),
            ));
        }
    }
    let l = &r.latency_ms;
    v.push(Verdict::new(
        Level::Info,
        format!(
            "{} requests at {}: latency p50 {}, p95 {}, p99 {}; {} failed.",
            r.requests.total,
            format_rate(r.requests.rate),
            format_ms(l.p50),
            format_ms(l.p95),
            format_ms(l.p99),
            error_share(r.requests.failed, r.requests.total)
        ),
    ));
    if let Some((kind, n)) = r.errors.iter().max_by_key(|(_, n)| **n) {
        v.push(Verdict::new(
            Level::Warn,
            format!(
                "{} requests failed, most with `{kind}` ({n}): {}.",
                r.requests.failed,
                r.error_hints
                    .get(kind)
                    .map(String::as_str)
                    .unwrap_or("see the errors section")
            ),
        ));
    }
    if r.valid {
        v.push(Verdict::new(
            Level::Pass,
            format!(
                "Valid measurement: the load generator kept up ({}).",
                generator_words(r)
            ),
        ));
    }
    v.extend(caveats(r));
    v
}

/// Honest caveats about how the numbers were measured.
pub fn caveats(r: &RunResult) -> Vec<Verdict> {
    let mut v = Vec::new();
    if r.load.model == "closed" {
        v.push(Verdict::new(
            Level::Info,
            "Closed model: each virtual user waits for its response before sending again, so under overload the measured latency understates what arriving users would see; an open model measures latency at a given arrival rate.",
        ));
    }
    if r.iterations.dropped > 0 {
        v.push(Verdict::new(
            Level::Warn,
            format!(
                "{} planned arrivals could not start before the end (max_in_flight reached).",
                r.iterations.dropped
            ),
        ));
    }
    v
}

fn summary(r: &RunResult) -> Section {
    let mut s = Section::new("summary", "Summary");
    s.push(Block::Text(format!(
        "**What was tested:** scenario `{}` against {}, {}; {}.",
        r.name,
        r.target
            .as_deref()
            .map(|t| format!("`{t}`"))
            .unwrap_or_else(|| "an unrecorded target".to_string()),
        load_words(&r.load),
        duration_words(r)
    )));
    s.push(Block::Table(key_table(r)));
    s
}

fn key_table(r: &RunResult) -> Table {
    let mut t = Table::new(&["Metric", ">Value"]);
    t.row(cells!["Requests", r.requests.total.to_string()]);
    t.row(cells!["Throughput", format_rate(r.requests.rate)]);
    let failed = error_share(r.requests.failed, r.requests.total);
    t.row(cells![
        "Failed",
        Cell::level(
            format!("{} ({failed})", r.requests.failed),
            if r.requests.failed == 0 {
                Level::Pass
            } else {
                Level::Warn
            }
        )
    ]);
    let l = &r.latency_ms;
    for (name, v) in [
        ("Latency p50", l.p50),
        ("Latency p95", l.p95),
        ("Latency p99", l.p99),
        ("Latency max", l.max),
    ] {
        t.row(cells![name, format_ms(v)]);
    }
    if r.load.model == "open" {
        t.row(cells!["Send lag p99", format_ms(r.lag_ms.p99)]);
    }
    t
}

/// What a report says about measurement method, shared by run and study reports.
pub fn measurement_methods(model: &str) -> Vec<String> {
    let mut m = vec![
        "Latency is recorded into HDR histograms (1 µs – 1 h, 3 significant digits), one per worker thread, merged exactly; percentiles come from the merged histogram, never from averaged percentiles.".to_string(),
        "Requests completed during the warm-up are recorded but excluded from every statistic and threshold.".to_string(),
    ];
    if model == "open" {
        m.push("Open model: latency is measured from each request's *intended* send time (no coordinated omission); the service time is measured from the actual send, and the difference (send lag) is reported separately.".to_string());
    } else {
        m.push(
            "Closed model: latency is measured from the actual send of each request.".to_string(),
        );
    }
    m.push("Generator health: the CPU time of the worker threads and the scheduler's lag are measured; CPU ≥ 90% of the cores used, or lag p99 above 10 ms, marks the run invalid.".to_string());
    m
}

fn method(r: &RunResult, plan: Option<&PlannedLoad>) -> Section {
    let mut s = Section::new("method", "Method");
    let mut facts = vec![(
        "Scenario".to_string(),
        match &r.scenario_file {
            Some(f) => format!("`{}` (from `{f}`)", r.name),
            None => format!("`{}`", r.name),
        },
    )];
    facts.push(("Load".to_string(), load_words(&r.load)));
    facts.push((
        "Planned duration".to_string(),
        format_secs(r.load.planned_duration_s),
    ));
    facts.push((
        "Warm-up".to_string(),
        if r.warmup_s > 0.0 {
            format!(
                "{} (excluded; {} requests)",
                format_secs(r.warmup_s),
                r.requests.warmup
            )
        } else {
            "none".to_string()
        },
    ));
    facts.push((
        "Repetitions".to_string(),
        "1 run (no run-to-run variation can be estimated; a study repeats runs)".to_string(),
    ));
    facts.push(("Started".to_string(), r.started_at.clone()));
    facts.push(("Tool".to_string(), format!("loadlab {}", r.tool_version)));
    s.push(Block::Facts(facts));
    if let Some(p) = plan {
        s.push(Block::Chart(plan_chart(p, r.warmup_s)));
    }
    s.push(Block::Heading("Measurement".to_string()));
    s.push(Block::List(measurement_methods(&r.load.model)));
    s
}

/// The small chart of the planned load.
pub fn plan_chart(p: &PlannedLoad, warmup_s: f64) -> Chart {
    let (label, unit, what) = if p.vus {
        ("virtual users", Unit::Count, "virtual users")
    } else {
        ("arrivals/s", Unit::PerSecond, "arrival rate")
    };
    let mut c = Chart::new(
        "planned-load",
        "Planned load",
        Axis::linear("time since start (s)", Unit::Seconds),
        Axis::linear(label, unit),
    )
    .describe(format!(
        "The {what} the scenario asks for over time; the shaded part is the warm-up."
    ))
    .series(Series::new(
        if p.vus {
            "planned VUs"
        } else {
            "planned arrivals/s"
        },
        SeriesKind::Line,
        0,
        p.points.clone(),
    ))
    .height(200);
    if warmup_s > 0.0 {
        c.bands.push(Band {
            from: 0.0,
            to: warmup_s,
            label: "warm-up".to_string(),
        });
    }
    c
}

fn environment(r: &RunResult) -> Section {
    let mut s = Section::new("environment", "Environment");
    let mut facts = Vec::new();
    facts.push((
        "Target".to_string(),
        r.target
            .as_deref()
            .map(|t| format!("`{t}`"))
            .unwrap_or_else(|| "not recorded".to_string()),
    ));
    match &r.environment {
        Some(e) => facts.extend(environment_facts(e)),
        None => facts.push((
            "Machine".to_string(),
            "not recorded (result written by an older loadlab)".to_string(),
        )),
    }
    facts.push(("Load generator".to_string(), generator_words(r)));
    s.push(Block::Facts(facts));
    let mut notes = Vec::new();
    if r.generator.saturated || !r.valid {
        for reason in &r.invalid_reasons {
            notes.push(Verdict::new(Level::Fail, format!("Invalid: {reason}.")));
        }
    }
    if let Some(t) = &r.target {
        if t.contains("127.0.0.1") || t.contains("localhost") || t.contains("[::1]") {
            notes.push(Verdict::new(
                Level::Info,
                "The target runs on the same machine as the generator: they share its CPUs, so the generator's CPU use above also competes with the target.",
            ));
        }
    }
    if !notes.is_empty() {
        s.push(Block::Notes(notes));
    }
    s
}

fn latency_row(name: &str, l: &LatencySummary) -> Vec<Cell> {
    cells![
        name,
        l.count.to_string(),
        format_ms(l.min),
        format_ms(l.mean),
        format_ms(l.p50),
        format_ms(l.p90),
        format_ms(l.p95),
        format_ms(l.p99),
        format_ms(l.p999),
        format_ms(l.max),
    ]
}

const LATENCY_COLUMNS: [&str; 10] = [
    "", ">count", ">min", ">mean", ">p50", ">p90", ">p95", ">p99", ">p99.9", ">max",
];

fn results(r: &RunResult) -> Section {
    let mut s = Section::new("results", "Results");
    let mut t = Table::new(&LATENCY_COLUMNS);
    t.row(latency_row("latency", &r.latency_ms));
    t.row(latency_row("service time", &r.service_time_ms));
    let mut t = t.with_note(
        "Latency is what a user waits; service time is measured from the actual send (they differ when the generator sends late).",
    );
    if r.load.model == "open" {
        t.row(cells![
            "send lag",
            "",
            "",
            "",
            format_ms(r.lag_ms.p50),
            "",
            "",
            format_ms(r.lag_ms.p99),
            "",
            format_ms(r.lag_ms.max)
        ]);
    }
    s.push(Block::Table(t));
    let mut counts = Table::new(&["", ">value"]);
    counts.row(cells!["requests completed", r.requests.total.to_string()]);
    counts.row(cells!["requests ok", r.requests.ok.to_string()]);
    counts.row(cells![
        "requests failed",
        format!(
            "{} ({})",
            r.requests.failed,
            error_share(r.requests.failed, r.requests.total)
        )
    ]);
    counts.row(cells!["throughput", format_rate(r.requests.rate)]);
    counts.row(cells![
        "iterations completed",
        r.iterations.completed.to_string()
    ]);
    if r.load.model == "open" {
        counts.row(cells!["arrivals dropped", r.iterations.dropped.to_string()]);
        counts.row(cells![
            "arrivals delayed by max_in_flight",
            r.iterations.delayed_by_max_in_flight.to_string()
        ]);
    }
    s.push(Block::Table(counts));
    if !r.status_codes.is_empty() {
        s.push(Block::Heading("Status codes".to_string()));
        let mut t = Table::new(&["status", ">responses", ">share"]);
        let total: u64 = r.status_codes.values().sum();
        for (code, n) in &r.status_codes {
            t.row(cells![code.as_str(), n.to_string(), error_share(*n, total)]);
        }
        s.push(Block::Table(t));
    }
    if !r.groups.is_empty() {
        s.push(Block::Heading("Per group".to_string()));
        let mut t = Table::new(&[
            "group",
            ">requests",
            ">failed",
            ">p50",
            ">p95",
            ">p99",
            ">max",
        ]);
        for g in &r.groups {
            t.row(cells![
                format!("`{}`", g.name),
                g.requests.to_string(),
                error_share(g.failed, g.requests),
                format_ms(g.latency_ms.p50),
                format_ms(g.latency_ms.p95),
                format_ms(g.latency_ms.p99),
                format_ms(g.latency_ms.max)
            ]);
        }
        s.push(Block::Table(t));
    }
    if r.steps.len() > 1 || r.steps.iter().any(|s| s.group.is_some()) {
        s.push(Block::Heading("Per step".to_string()));
        let mut t = Table::new(&[
            "step",
            "group",
            ">requests",
            ">failed",
            ">p50",
            ">p95",
            ">p99",
            ">max",
        ]);
        for st in &r.steps {
            t.row(cells![
                format!("`{}`", st.name),
                st.group.clone().unwrap_or_default(),
                st.requests.to_string(),
                error_share(st.failed, st.requests),
                format_ms(st.latency_ms.p50),
                format_ms(st.latency_ms.p95),
                format_ms(st.latency_ms.p99),
                format_ms(st.latency_ms.max)
            ]);
        }
        s.push(Block::Table(t));
    }
    s
}

fn warmup_band(c: &mut Chart, warmup_s: f64) {
    if warmup_s > 0.0 {
        c.bands.push(Band {
            from: 0.0,
            to: warmup_s,
            label: "warm-up (excluded)".to_string(),
        });
    }
}

/// p50/p95/p99 per interval, with latency thresholds as reference lines.
pub fn latency_over_time(r: &RunResult, id: &str) -> Chart {
    let pts = |f: fn(&loadlab_metrics::result::IntervalLatency) -> f64| {
        r.intervals
            .iter()
            .filter(|i| i.requests > 0)
            .map(|i| (i.t as f64, f(&i.latency_ms)))
            .collect::<Vec<_>>()
    };
    let mut c = Chart::new(
        id,
        "Latency percentiles over time",
        Axis::linear("time since start (s)", Unit::Seconds),
        Axis::linear("latency", Unit::Millis),
    )
    .describe("p50, p95 and p99 of each 1-second slice: a rising line means the target fell behind; spikes are stalls.")
    .series(Series::new("p50", SeriesKind::Line, 2, pts(|l| l.p50)))
    .series(Series::new("p95", SeriesKind::Line, 0, pts(|l| l.p95)))
    .series(Series::new("p99", SeriesKind::Line, 1, pts(|l| l.p99)));
    warmup_band(&mut c, r.warmup_s);
    for t in &r.thresholds {
        let metric = t.expr.split(['<', '>']).next().unwrap_or("").trim();
        if matches!(metric, "latency.p95" | "latency.p99" | "latency.p50") {
            if let Some(limit) = threshold_limit(&t.expr) {
                c.rules.push(Rule::y(
                    limit,
                    format!("threshold {}", t.expr),
                    if t.ok { Level::Pass } else { Level::Fail },
                ));
            }
        }
    }
    c
}

/// The number on the right of a latency threshold, in ms (`< 250ms` → 250, `< 2.8s` → 2800).
fn threshold_limit(expr: &str) -> Option<f64> {
    let pos = expr.rfind(['<', '>', '='])?;
    let v = expr[pos + 1..].trim();
    let (num, mult) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix("us").or_else(|| v.strip_suffix("µs")) {
        (n, 0.001)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1000.0)
    } else {
        (v, 1.0)
    };
    num.trim().parse::<f64>().ok().map(|x| x * mult)
}

pub fn throughput_over_time(r: &RunResult, plan: Option<&PlannedLoad>, id: &str) -> Chart {
    let ok: Vec<(f64, f64)> = r
        .intervals
        .iter()
        .map(|i| {
            (
                i.t as f64,
                i.rate * (i.requests - i.failed.min(i.requests)) as f64 / i.requests.max(1) as f64,
            )
        })
        .collect();
    let failed: Vec<(f64, f64)> = r
        .intervals
        .iter()
        .map(|i| {
            (
                i.t as f64,
                i.rate * i.failed as f64 / i.requests.max(1) as f64,
            )
        })
        .collect();
    let mut c = Chart::new(
        id,
        "Throughput and errors over time",
        Axis::linear("time since start (s)", Unit::Seconds),
        Axis::linear("requests/s", Unit::PerSecond),
    )
    .describe("Completed requests per second, successful and failed; under an open model the planned arrival rate is dashed.")
    .series(Series::new("ok/s", SeriesKind::Line, 2, ok))
    .series(Series::new("failed/s", SeriesKind::Line, 1, failed));
    if let Some(p) = plan.filter(|p| !p.vus) {
        c = c.series(
            Series::new("planned arrivals/s", SeriesKind::Line, 6, p.points.clone()).dashed(),
        );
    }
    warmup_band(&mut c, r.warmup_s);
    c
}

pub fn active_over_time(r: &RunResult, plan: Option<&PlannedLoad>, id: &str) -> Chart {
    let closed = r.load.model == "closed";
    let what = if closed {
        "active VUs"
    } else {
        "requests in flight"
    };
    let mut c = Chart::new(
        id,
        if closed {
            "Active virtual users over time"
        } else {
            "Requests in flight over time"
        },
        Axis::linear("time since start (s)", Unit::Seconds),
        Axis::linear(what, Unit::Count),
    )
    .describe(if closed {
        "Virtual users running at the end of each slice (dashed: the plan)."
    } else {
        "Requests sent and not yet answered at the end of each slice: growth means the target cannot keep up with the arrival rate."
    })
    .series(Series::new(
        what,
        SeriesKind::Line,
        3,
        r.intervals
            .iter()
            .map(|i| (i.t as f64, i.active as f64))
            .collect(),
    ));
    if let Some(p) = plan.filter(|p| p.vus) {
        c = c.series(Series::new("planned VUs", SeriesKind::Line, 6, p.points.clone()).dashed());
    }
    warmup_band(&mut c, r.warmup_s);
    c
}

/// `(quantile, ms)` along the HdrHistogram percentile axis, from a base64 V2 histogram.
pub fn percentile_curve(encoded: &str) -> Vec<(f64, f64)> {
    let Some(h) = decode_histogram(encoded) else {
        return Vec::new();
    };
    if h.is_empty() {
        return Vec::new();
    }
    let top = (h.len() as f64).log10().clamp(1.0, 6.0);
    let steps = (top * 20.0).round() as usize;
    let mut pts: Vec<(f64, f64)> = (0..=steps)
        .map(|i| {
            let t = top * i as f64 / steps as f64;
            let q = 1.0 - 10f64.powf(-t);
            (q, h.value_at_quantile(q) as f64 / 1000.0)
        })
        .collect();
    pts.push((1.0 - 10f64.powf(-top - 0.3), h.max() as f64 / 1000.0));
    pts
}

pub fn distribution_chart(series: Vec<(String, Vec<(f64, f64)>)>, id: &str) -> Chart {
    let mut c = Chart::new(
        id,
        "Latency distribution (HDR percentile plot)",
        Axis::percentile("percentile (log scale of 1/(1−p))"),
        Axis::log("latency (log scale)", Unit::Millis),
    )
    .describe("Latency at each percentile of the measured requests, from the merged HDR histogram: the right-hand end is the tail (p99.9 and beyond).");
    for (i, (name, pts)) in series.into_iter().enumerate() {
        c = c.series(Series::new(&name, SeriesKind::Line, i, pts));
    }
    c
}

fn charts(r: &RunResult, plan: Option<&PlannedLoad>) -> Section {
    let mut s = Section::new("charts", "Charts");
    s.push(Block::Chart(latency_over_time(r, "latency-over-time")));
    s.push(Block::Chart(throughput_over_time(
        r,
        plan,
        "throughput-over-time",
    )));
    s.push(Block::Chart(active_over_time(r, plan, "active-over-time")));
    s.push(Block::Chart(distribution_chart(
        vec![
            (
                "latency".to_string(),
                percentile_curve(&r.histograms.latency),
            ),
            (
                "service time".to_string(),
                percentile_curve(&r.histograms.service_time),
            ),
        ],
        "latency-distribution",
    )));
    s
}

/// Errors by kind, with what each means and an example message.
pub fn errors_table(r: &RunResult) -> Table {
    let mut t = Table::new(&[
        "kind",
        ">count",
        ">share of requests",
        "what it means",
        "example",
    ]);
    let mut kinds: Vec<(&String, &u64)> = r.errors.iter().collect();
    kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (kind, n) in kinds {
        t.row(cells![
            format!("`{kind}`"),
            n.to_string(),
            error_share(*n, r.requests.total),
            r.error_hints.get(kind).cloned().unwrap_or_default(),
            r.error_examples.get(kind).cloned().unwrap_or_default()
        ]);
    }
    t
}

fn errors(r: &RunResult) -> Section {
    let mut s = Section::new("errors", "Errors");
    s.push(Block::Text(format!(
        "{} of {} requests failed ({}).",
        r.requests.failed,
        r.requests.total,
        error_share(r.requests.failed, r.requests.total)
    )));
    s.push(Block::Table(errors_table(r)));
    s
}

fn thresholds(r: &RunResult) -> Section {
    let mut s = Section::new("thresholds", "Thresholds");
    let mut t = Table::new(&["threshold", ">actual", "result"]);
    for th in &r.thresholds {
        t.row(cells![
            format!("`{}`", th.expr),
            threshold_actual(th),
            if th.ok {
                Cell::level("met", Level::Pass)
            } else {
                Cell::level("missed", Level::Fail)
            }
        ]);
    }
    s.push(Block::Table(t));
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn limits() {
        assert_eq!(super::threshold_limit("latency.p95 < 250ms"), Some(250.0));
        assert_eq!(super::threshold_limit("latency.p95 < 2.8s"), Some(2800.0));
        assert_eq!(super::threshold_limit("latency.p99 <= 900us"), Some(0.9));
    }
}
