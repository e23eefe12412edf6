//! The end-of-run summary for a terminal or a CI log: aligned plain text, k6-like, colour optional.

use crate::format::{
    format_ms, format_number, format_rate, format_secs, percent_of, truncate, Unit,
};
use crate::Style;
use loadlab_metrics::result::{LatencySummary, RunResult};
use loadlab_metrics::LoadModel;
use std::io::{self, Write};

/// Width of the dotted label column (`latency ...........: `).
const LABEL_WIDTH: usize = 19;
/// Longest step or group name shown in a table before it is shortened.
const NAME_WIDTH: usize = 32;

/// Shown when the generator, not the target, was the bottleneck.
pub(crate) const SATURATED_WARNING: &str =
    "the load generator was saturated: results understate the target's capacity and overstate its latency";

/// Writes the end-of-run summary of `result` to `out`.
pub fn render_summary(result: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let r = result;
    header(r, out, style)?;
    validity(r, out, style)?;
    requests(r, out)?;
    writeln!(out)?;
    latency(r, out, style)?;
    crate::terminal_timings::phases(r, out, kv)?;
    crate::terminal_resources::server_time(r, out, kv)?;
    crate::terminal_resources::slowest(r, out, kv)?;
    writeln!(out)?;
    statuses_and_errors(r, out, style)?;
    checks(r, out, style)?;
    steps(r, out, style)?;
    groups(r, out, style)?;
    thresholds(r, out, style)?;
    segments(r, out, style)?;
    writeln!(out)?;
    generator(r, out, style)?;
    crate::terminal_resources::resources(r, out, style, kv)?;
    if !r.valid {
        writeln!(
            out,
            "  {}",
            style.bold_red("INVALID RUN (see the reasons at the top)")
        )?;
    }
    Ok(())
}

fn label(text: &str) -> String {
    format!("{:.<LABEL_WIDTH$}: ", format!("{text} "))
}

fn kv(out: &mut dyn Write, name: &str, value: &str) -> io::Result<()> {
    writeln!(out, "  {}{value}", label(name))
}

fn header(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let load = &r.load;
    let model = match load.model {
        LoadModel::Closed => match load.max_vus {
            Some(1) => "closed model (1 VU)".to_string(),
            Some(vus) => format!("closed model ({vus} VUs)"),
            None => "closed model".to_string(),
        },
        LoadModel::Open => match load.peak_rate {
            Some(rate) => format!("open model (peak {})", format_rate(rate)),
            None => "open model".to_string(),
        },
        LoadModel::Burst => match load.count {
            Some(n) => format!("burst model ({n} requests)"),
            None => "burst model".to_string(),
        },
    };
    let mut parts = vec![
        style.bold(&r.name),
        model,
        format!("{} measured", format_secs(r.duration_s)),
    ];
    if r.warmup_s > 0.0 {
        parts.push(format!("{} warm-up excluded", format_secs(r.warmup_s)));
    }
    if let Some(target) = &r.target {
        parts.push(format!("target {target}"));
    }
    writeln!(out, "{}", parts.join(" · "))?;
    writeln!(out)
}

fn validity(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    if r.valid {
        writeln!(out, "  {} {}", style.green("valid run:"), checked_words(r))?;
    }
    if !r.valid {
        writeln!(
            out,
            "  {}",
            style.bold_red("INVALID RUN: these numbers must not be used as a result")
        )?;
        if r.validity.reasons.is_empty() {
            writeln!(out, "    - (no reason recorded)")?;
        }
        for reason in r.invalid_messages() {
            writeln!(out, "    - {reason}")?;
        }
    }
    if r.interrupted {
        writeln!(
            out,
            "  {} the run stopped early; this is a partial result covering only what ran",
            style.yellow("interrupted:")
        )?;
    }
    for v in &r.verdicts {
        writeln!(out, "  {} {}", style.yellow("target:"), v.message)?;
    }
    for note in &r.notes {
        writeln!(out, "  {} {note}", style.yellow("note:"))?;
    }
    writeln!(out)?;
    Ok(())
}

/// What was checked to call a run valid: the generator's CPU and timing, and delivery.
fn checked_words(r: &RunResult) -> String {
    let g = &r.generator;
    let mut checked = vec![format!(
        "generator CPU {:.0}% of its cores (limit 90%)",
        g.cpu_percent
    )];
    match (&g.pauses_ms, r.load.model) {
        (Some(p), _) => checked.push(format!("its timing (pause probe p99 {})", format_ms(p.p99))),
        (None, LoadModel::Open) => checked.push(format!(
            "arrivals sent on time (scheduler lag p99 {})",
            format_ms(g.scheduler_lag_ms_p99)
        )),
        _ => {}
    }
    checked.push("delivery, open files and ports".into());
    format!("checked {}", checked.join(", "))
}

fn requests(r: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let q = &r.requests;
    kv(
        out,
        "requests",
        &(format!(
            "{} total, {} ok, {} failed ({}){}, {}",
            q.total,
            q.ok,
            q.failed,
            percent_of(q.failed, q.total),
            if q.interrupted > 0 {
                format!(
                    ", of which {} in flight when the run stopped",
                    q.interrupted
                )
            } else {
                String::new()
            },
            format_rate(q.rate)
        ) + &if q.warmup > 0 {
            format!(" (after warm-up; {} during it)", q.warmup)
        } else {
            String::new()
        }),
    )?;
    crate::terminal_timings::data(r, out, kv)?;
    let it = &r.iterations;
    let mut iterations = format!("{} completed, {} dropped", it.completed, it.dropped);
    if it.delayed_by_max_in_flight > 0 {
        iterations.push_str(&format!(
            ", {} delayed by max_in_flight",
            it.delayed_by_max_in_flight
        ));
    }
    if it.warmup > 0 {
        iterations.push_str(&format!(" (after warm-up; {} during it)", it.warmup));
    }
    kv(out, "iterations", &iterations)?;
    crate::terminal_timings::iterations_and_vus(r, out, kv)?;
    if let Some(protocol) = crate::words::protocol_words(r) {
        kv(out, "protocol", &protocol)?;
    }
    for (label, sentence) in crate::words::request_wait_facts(r) {
        kv(out, &label.to_lowercase(), &sentence)?;
    }
    if q.warmup > 0 {
        kv(
            out,
            "warm-up requests",
            &format!("{} (excluded from every statistic)", q.warmup),
        )?;
    }
    Ok(())
}

/// `min=… mean=… p50=… p90=… p95=… p99=… p99.9=… max=…`, or a note when nothing completed.
pub(crate) fn latency_line(l: &LatencySummary) -> String {
    if l.count == 0 {
        return "no data (no request completed)".to_string();
    }
    format!(
        "min={} mean={} p50={} p90={} p95={} p99={} p99.9={} max={}",
        format_ms(l.min),
        format_ms(l.mean),
        format_ms(l.p50),
        format_ms(l.p90),
        format_ms(l.p95),
        format_ms(l.p99),
        format_ms(l.p999),
        format_ms(l.max)
    )
}

fn latency(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    kv(out, "latency", &latency_line(&r.latency_ms))?;
    // In the closed model latency is measured from the send, so service time says the same:
    // shown only where it differs (the open model and bursts, measured from the intended time).
    if r.load.model != LoadModel::Closed {
        kv(out, "service time", &latency_line(&r.service_time_ms))?;
    }
    match r.load.model {
        LoadModel::Open | LoadModel::Burst => kv(
            out,
            "open model",
            &format!(
                "latency is measured from the intended send time; send lag p50={} p99={} max={}{}",
                format_ms(r.lag_ms.p50),
                format_ms(r.lag_ms.p99),
                format_ms(r.lag_ms.max),
                r.generator
                    .batch_window_ms
                    .map_or(String::new(), |w| format!(
                        "; batch window {}{}",
                        format_ms(w),
                        if r.generator.reads_at_wakeups {
                            ", responses read at its wake-ups (timed by the kernel)"
                        } else {
                            ""
                        }
                    ))
            ),
        ),
        LoadModel::Closed => kv(
            out,
            "closed model",
            &style.dim(
                "under overload, closed-model latency understates what users would see \
                 (VUs wait instead of arriving)",
            ),
        ),
    }
}

fn statuses_and_errors(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let mut codes: Vec<(&String, &u64)> = r.status_codes.iter().collect();
    codes.sort_by_key(|(code, _)| (code.parse::<u32>().unwrap_or(u32::MAX), code.as_str()));
    let codes = if codes.is_empty() {
        "none".to_string()
    } else {
        codes
            .iter()
            .map(|(code, n)| format!("{code}={n}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    kv(out, "status codes", &codes)?;

    let total_errors: u64 = r.errors.values().sum();
    if total_errors == 0 {
        return kv(out, "errors", "none");
    }
    kv(
        out,
        "errors",
        &style.red(&format!(
            "{total_errors} ({} of requests)",
            percent_of(total_errors, r.requests.total)
        )),
    )?;
    let mut errors: Vec<(&String, &u64)> = r.errors.iter().collect();
    errors.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let kind_w = errors
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    let count_w = errors
        .iter()
        .map(|(_, n)| n.to_string().len())
        .max()
        .unwrap_or(0);
    for (kind, n) in errors {
        let pct = percent_of(*n, r.requests.total);
        let lead = format!("    {kind:<kind_w$}  {n:>count_w$}  {pct:>7}  ");
        let hint = r.error_hints.get(kind).map(String::as_str).unwrap_or("");
        writeln!(out, "{lead}{hint}")?;
        if let Some(example) = r.error_examples.get(kind) {
            let indent = " ".repeat(lead.chars().count());
            writeln!(out, "{indent}{}", style.dim(&format!("e.g. {example}")))?;
        }
    }
    Ok(())
}

/// Every `check:` of the scenario with its failures, so a failing check is named, not just counted.
fn checks(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let all: Vec<(&str, &str, u64)> = r
        .steps
        .iter()
        .flat_map(|s| {
            s.checks
                .iter()
                .map(move |c| (s.name.as_str(), c.check.as_str(), c.failed))
        })
        .collect();
    if all.is_empty() {
        return Ok(());
    }
    let failing = all.iter().filter(|c| c.2 > 0).count();
    kv(
        out,
        "checks",
        &format!("{} checked, {failing} failing", all.len()),
    )?;
    for (step, check, failed) in all {
        let mark = if failed == 0 {
            style.green("✓")
        } else {
            style.red("✗")
        };
        let tail = if failed == 0 {
            String::new()
        } else {
            format!("  {failed} failed")
        };
        writeln!(out, "    {mark} {step}: {check}{tail}")?;
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Align {
    Left,
    Right,
}

/// An aligned table indented under a section title; the header row is bold when colour is on.
fn table(
    out: &mut dyn Write,
    style: Style,
    columns: &[(&str, Align)],
    rows: &[Vec<String>],
) -> io::Result<()> {
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, (h, _))| {
            rows.iter()
                .map(|row| row[i].chars().count())
                .chain([h.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(columns)
            .zip(&widths)
            .map(|((cell, (_, align)), &w)| match align {
                Align::Left => format!("{cell:<w$}"),
                Align::Right => format!("{cell:>w$}"),
            })
            .collect();
        format!("  {}", padded.join("  ").trim_end())
    };
    let head = line(columns.iter().map(|(h, _)| *h).collect());
    writeln!(out, "{}", style.bold(&head))?;
    for row in rows {
        writeln!(out, "{}", line(row.iter().map(String::as_str).collect()))?;
    }
    Ok(())
}

fn failed_cell(failed: u64, requests: u64) -> String {
    if failed == 0 {
        "0".to_string()
    } else {
        format!("{failed} ({})", percent_of(failed, requests))
    }
}

fn percentile_cells(l: &LatencySummary) -> [String; 4] {
    if l.count == 0 {
        return ["-", "-", "-", "-"].map(String::from);
    }
    [l.p50, l.p95, l.p99, l.max].map(format_ms)
}

fn steps(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    if r.steps.is_empty() {
        return Ok(());
    }
    let with_groups = r.steps.iter().any(|s| s.group.is_some());
    let mut columns = vec![("step", Align::Left)];
    if with_groups {
        columns.push(("group", Align::Left));
    }
    columns.extend(COUNT_AND_LATENCY);
    let rows: Vec<Vec<String>> = r
        .steps
        .iter()
        .map(|s| {
            let mut row = vec![truncate(&s.name, NAME_WIDTH)];
            if with_groups {
                row.push(truncate(s.group.as_deref().unwrap_or("-"), NAME_WIDTH / 2));
            }
            row.extend(count_and_latency_cells(s.requests, s.failed, &s.latency_ms));
            row
        })
        .collect();
    writeln!(out)?;
    table(out, style, &columns, &rows)
}

/// The columns the step and group tables share.
const COUNT_AND_LATENCY: [(&str, Align); 6] = [
    ("requests", Align::Right),
    ("failed", Align::Right),
    ("p50", Align::Right),
    ("p95", Align::Right),
    ("p99", Align::Right),
    ("max", Align::Right),
];

fn count_and_latency_cells(requests: u64, failed: u64, latency: &LatencySummary) -> Vec<String> {
    let mut cells = vec![requests.to_string(), failed_cell(failed, requests)];
    cells.extend(percentile_cells(latency));
    cells
}

fn groups(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    if r.groups.is_empty() || crate::run_doc::each_group_is_one_step(r) {
        return Ok(());
    }
    let mut columns = vec![("group", Align::Left)];
    columns.extend(COUNT_AND_LATENCY);
    let rows: Vec<Vec<String>> = r
        .groups
        .iter()
        .map(|g| {
            let mut row = vec![truncate(&g.name, NAME_WIDTH)];
            row.extend(count_and_latency_cells(g.requests, g.failed, &g.latency_ms));
            row
        })
        .collect();
    writeln!(out)?;
    table(out, style, &columns, &rows)
}

fn thresholds(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    if r.thresholds.is_empty() {
        return Ok(());
    }
    let failed = r.thresholds.iter().filter(|t| !t.ok).count();
    let passed = r.thresholds.len() - failed;
    writeln!(out)?;
    let verdict = format!("{passed} passed, {failed} failed");
    let verdict = if failed > 0 {
        style.red(&verdict)
    } else {
        style.green(&verdict)
    };
    kv(out, "thresholds", &verdict)?;
    let expr_w = r
        .thresholds
        .iter()
        .map(|t| t.expr.chars().count())
        .max()
        .unwrap_or(0);
    for t in &r.thresholds {
        let mark = if t.ok {
            style.green("✓")
        } else {
            style.red("✗")
        };
        let actual = match t.actual {
            Some(x) => Unit::of_threshold(&t.expr).format(x),
            None => "no data".to_string(),
        };
        let line = format!("{:<expr_w$}  {actual}", t.expr);
        writeln!(out, "    {mark} {}", line.trim_end())?;
    }
    Ok(())
}

/// A merged run's segments: one row each, so a bad segment is seen at once.
fn segments(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    if r.segments.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    let count = r.segments.len();
    let rows: Vec<Vec<String>> = r.segments.iter().map(segment_row).collect();
    writeln!(
        out,
        "  {}",
        style.bold(&format!("segments ({count} merged)"))
    )?;
    table(
        out,
        style,
        &[
            ("segment", Align::Right),
            ("pod @ node (or host)", Align::Left),
            ("requests", Align::Right),
            ("failed", Align::Right),
            ("generator cpu", Align::Right),
            ("start", Align::Right),
            ("clock", Align::Right),
            ("valid", Align::Left),
        ],
        &rows,
    )?;
    if let Some(skew) = &r.clock_skew {
        writeln!(
            out,
            "  clock skew between segments: {:.0} ms ± {:.0} ms (against the {})",
            skew.spread_ms, skew.uncertainty_ms, skew.reference
        )?;
    }
    Ok(())
}

/// One segment as the per-segment tables (terminal, report) show it.
pub(crate) fn segment_row(s: &loadlab_metrics::result::SegmentSummary) -> Vec<String> {
    let place = match (&s.pod, &s.node) {
        (Some(pod), Some(node)) => format!("{pod} @ {node}"),
        (Some(pod), None) => pod.clone(),
        _ => s.host.clone().unwrap_or_else(|| "-".into()),
    };
    vec![
        format!("{}", s.index),
        place,
        s.requests.to_string(),
        s.failed.to_string(),
        format!("{:.0}%", s.cpu_percent),
        format!("{:+.0} ms", s.start_offset_ms),
        match &s.clock {
            Some(c) => format!("{:+.0} ± {:.0} ms", c.offset_ms, c.uncertainty_ms),
            None => "-".into(),
        },
        if s.valid {
            "yes".to_string()
        } else {
            let kinds: Vec<&str> = s.invalid.iter().map(|k| k.as_str()).collect();
            format!("no ({})", kinds.join(", "))
        },
    ]
}

fn generator(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let g = &r.generator;
    let cores = if g.cores == 1 { "core" } else { "cores" };
    let threads = if g.threads == 1 { "thread" } else { "threads" };
    kv(
        out,
        "generator",
        &(format!(
            "cpu {:.1}% of {} worker {threads} ({} {cores} available), saturated: {}, scheduler lag p99={}, max rss {}",
            g.cpu_percent,
            g.threads,
            g.cores,
            if g.saturated { "yes" } else { "no" },
            format_ms(g.scheduler_lag_ms_p99),
            format_bytes(g.max_rss_bytes)
        ) + &went_through(g)),
    )?;
    if g.saturated {
        writeln!(out, "  {}", style.yellow(&format!("! {SATURATED_WARNING}")))?;
    }
    Ok(())
}

/// `, pause probe p99=0.25ms, waiting for a cpu 0.4%`: what the generator's threads went
/// through, on which its validity is judged.
fn went_through(g: &loadlab_metrics::result::Generator) -> String {
    let mut s = String::new();
    if let Some(p) = &g.pauses_ms {
        s.push_str(&format!(", pause probe p99={}", format_ms(p.p99)));
    }
    if let Some(w) = g.run_delay_share {
        s.push_str(&format!(", waiting for a cpu {:.1}%", 100.0 * w));
    }
    if let Some(steal) = g.steal_percent.filter(|s| *s >= 0.5) {
        s.push_str(&format!(", {steal:.0}% stolen"));
    }
    s
}

fn format_bytes(b: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    if b == 0 {
        "n/a".to_string()
    } else if b < 1024 {
        format!("{b} B")
    } else if (b as f64) < MIB {
        format!("{} KiB", format_number((b as f64 / 1024.0).round()))
    } else {
        format!("{:.1} MiB", b as f64 / MIB)
    }
}
