//! The report of a capacity search: the largest rate that meets the SLO, and its steps.

use super::environment::multi_environment;
use super::{warning_verdicts, Runs};
use crate::chart::{Axis, Chart, Rule, Series, SeriesKind, Unit};
use crate::doc::{Block, Cell, DocKind, Level, ReportDoc, Section, Table, Verdict};
use crate::format::{format_fraction, format_ms, format_rate, format_secs};
use crate::words::scenario_words;
use loadlab_analysis::capacity::{CapacityFinding, CapacityResult};
use loadlab_metrics::RunResult;

/// The headline: what was found, in the words every output of the search uses.
fn finding_verdict(finding: CapacityFinding) -> Verdict {
    match finding {
        CapacityFinding::Capacity {
            rate,
            confirmed_by,
            lowest_failing,
        } => Verdict::new(
            Level::Pass,
            format!(
                "Capacity: {} meets the SLO{}{}.",
                format_rate(rate),
                if confirmed_by > 0 {
                    format!(" (confirmed by {confirmed_by} repeated runs)")
                } else {
                    String::new()
                },
                match lowest_failing {
                    Some(hi) => format!("; {} does not", format_rate(hi)),
                    None => " — no rate tried failed, the capacity may be higher".to_string(),
                }
            ),
        ),
        CapacityFinding::AtLeast { rate, steps } => Verdict::new(
            Level::Warn,
            format!(
                "The search was interrupted after {steps} step(s): {} met the SLO, so the capacity is at least {} (not confirmed; resume the search to find it).",
                format_rate(rate),
                format_rate(rate)
            ),
        ),
        CapacityFinding::NothingYet { steps } => Verdict::new(
            Level::Warn,
            format!(
                "The search was interrupted after {steps} step(s), before any rate met the SLO: the capacity is not known yet (resume the search to find it)."
            ),
        ),
        CapacityFinding::NoneMet => Verdict::new(Level::Fail, "No rate tried met the SLO."),
    }
}

/// Builds the report of a capacity search.
pub fn capacity_report(c: &CapacityResult, runs: &Runs) -> ReportDoc {
    let every: Vec<&RunResult> = c.steps.iter().filter_map(|s| runs.get(&s.run)).collect();
    let sections = vec![
        summary_section(c),
        method_section(c),
        multi_environment(&every),
        steps_section(c),
    ];
    ReportDoc {
        kind: DocKind::Capacity,
        title: format!("{}: capacity report", c.name),
        subtitle: format!(
            "capacity search · {} · started {} · loadlab {}",
            c.id, c.started_at, c.tool_version
        ),
        verdicts: capacity_verdicts(c),
        sections,
        tool_version: c.tool_version.clone(),
    }
}

/// The finding, why the lowest failing rate failed, and the search's warnings.
fn capacity_verdicts(c: &CapacityResult) -> Vec<Verdict> {
    let mut verdicts = vec![finding_verdict(c.finding())];
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
    verdicts.extend(warning_verdicts(&c.warnings));
    verdicts
}

/// What was tested, and the capacity found in a small table.
fn summary_section(c: &CapacityResult) -> Section {
    let mut summary = Section::new("summary", "Summary");
    summary.push(Block::Text(format!(
        "**What was tested:** the largest arrival rate (open model) at which scenario `{}` meets its SLO, by doubling then bisecting the rate, {} per step.",
        c.name,
        format_secs(c.settings.hold_s)
    )));
    let mut t = Table::new(&["", ">value"]);
    t.row(cells![
        "capacity (largest passing rate)",
        match c.finding() {
            CapacityFinding::Capacity { rate, .. } => format_rate(rate),
            CapacityFinding::AtLeast { rate, .. } =>
                format!("at least {} (interrupted)", format_rate(rate)),
            CapacityFinding::NothingYet { .. } => "not known (interrupted)".into(),
            CapacityFinding::NoneMet => "none".into(),
        }
    ]);
    t.row(cells![
        "lowest failing rate",
        c.bracket[1]
            .map(format_rate)
            .unwrap_or_else(|| "none".into())
    ]);
    t.row(cells!["steps run", c.steps.len().to_string()]);
    summary.push(Block::Table(t));
    summary
}

/// The search's settings and its SLO.
fn method_section(c: &CapacityResult) -> Section {
    let mut method = Section::new("method", "Method");
    method.push(Block::Facts(vec![
        (
            "Scenario".into(),
            scenario_words(&c.name, c.scenario_file.as_deref()),
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
    method
}

/// Each step of the search: charts of its rates and latency, then a row per step.
fn steps_section(c: &CapacityResult) -> Section {
    let mut steps = Section::new("steps", "Search steps");
    steps.push(Block::chart(steps_chart(c)));
    steps.push(Block::chart(latency_chart(c)));
    steps.push(Block::Table(steps_table(c)));
    steps
}

/// The offered rate of each step, passed or failed, with the rate achieved and the capacity.
fn steps_chart(c: &CapacityResult) -> Chart {
    // Steps are numbered from 1, as in the table.
    let rates_where = |passed: bool| -> Vec<(f64, f64)> {
        c.steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.passed == passed)
            .map(|(i, s)| ((i + 1) as f64, s.rate))
            .collect()
    };
    let achieved = c
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| ((i + 1) as f64, s.achieved_rate))
        .collect();
    let mut chart = Chart::new(
        "capacity-steps",
        "Capacity search steps",
        Axis::linear("step", Unit::Count),
        Axis::linear("offered rate", Unit::PerSecond),
    )
    .describe("Each run of the search: the offered rate, passed (green) or failed (red); the dashed line is the capacity found.")
    .series(Series::new("passed", SeriesKind::Points, 2, rates_where(true)))
    .series(Series::new("failed", SeriesKind::Points, 1, rates_where(false)))
    .series(Series::new("achieved", SeriesKind::Line, 6, achieved).dashed());
    if let Some(r) = c.max_rate {
        chart = chart.rule(Rule::y(
            r,
            format!("capacity {}", format_rate(r)),
            Level::Pass,
        ));
    }
    chart
}

/// p95 against the offered rate, the steps in rate order.
fn latency_chart(c: &CapacityResult) -> Chart {
    let mut by_rate: Vec<&loadlab_analysis::capacity::CapacityStep> = c.steps.iter().collect();
    by_rate.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    Chart::new(
        "capacity-latency",
        "p95 latency against offered rate",
        Axis::linear("offered rate", Unit::PerSecond),
        Axis::linear("p95 latency", Unit::Millis),
    )
    .describe("p95 of each step against its offered rate: the SLO fails where the curve bends up.")
    .series(Series::new(
        "p95",
        SeriesKind::Line,
        0,
        by_rate.iter().map(|s| (s.rate, s.p95_ms)).collect(),
    ))
}

fn steps_table(c: &CapacityResult) -> Table {
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
                format!(
                    "not a valid measurement (the generator or its host), run again and not counted; {}",
                    s.reasons.join("; ")
                )
                .into()
            } else {
                s.reasons.join("; ").into()
            },
        ]);
    }
    t
}
