//! The end-of-run summary's counts: requests (with data, iterations, VUs and protocol),
//! status codes and errors by kind with their hints and examples.

use crate::format::{format_rate, percent_of};
use crate::terminal_lines::kv;
use crate::Style;
use loadlab_metrics::result::RunResult;
use std::io::{self, Write};

/// The requests line, then data, iterations, VUs, protocol, waits and warm-up requests.
pub(crate) fn requests(r: &RunResult, out: &mut dyn Write) -> io::Result<()> {
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
    crate::terminal_timings::data(r, out)?;
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
    // Another tool's results file holds requests, not loadlab's iterations.
    if r.imported.is_none() {
        kv(out, "iterations", &iterations)?;
    }
    crate::terminal_timings::iterations_and_vus(r, out)?;
    if let Some(protocol) = crate::words::protocol_words(r) {
        kv(out, "protocol", &protocol)?;
    }
    for (label, sentence) in crate::words::request_wait_facts(r) {
        kv(out, &label.to_lowercase(), &sentence)?;
    }
    for (label, sentence) in crate::data_words::data_set_facts(r) {
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

/// Responses by status code, then errors by kind (most first) with their hint and an example.
pub(crate) fn statuses_and_errors(
    r: &RunResult,
    out: &mut dyn Write,
    style: Style,
) -> io::Result<()> {
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
