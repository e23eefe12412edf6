//! The top of the end-of-run summary: what ran (name, load model, measured time, target),
//! whether it is a valid measurement and why, and the notes a reader must see first.

use crate::format::{format_ms, format_rate, format_secs};
use crate::Style;
use loadlab_metrics::result::RunResult;
use loadlab_metrics::LoadModel;
use std::io::{self, Write};

/// The first line: the run's name, load model, measured time, warm-up and target.
pub(crate) fn header(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
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

/// Whether the run is a valid measurement (what was checked, or why not), then whether it
/// was interrupted, the target verdicts and the notes.
pub(crate) fn validity(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    if let Some(source) = &r.imported {
        writeln!(
            out,
            "  {} {}",
            style.yellow("validity:"),
            source.validity_words()
        )?;
    } else if r.valid {
        writeln!(out, "  {} {}", style.green("valid run:"), checked_words(r))?;
    }
    if !r.valid && r.validity_judged() {
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
    if let Some(b) = &r.aborted_by_threshold {
        writeln!(
            out,
            "  {} {}; this is the partial result until then",
            style.bold_red("aborted:"),
            crate::words::aborted_words(r, b)
        )?;
    }
    if let Some(steered) = crate::words::steered_words(r) {
        writeln!(
            out,
            "  {} the load was driven by hand, {steered}; the figures below cover every level it ran at",
            style.yellow("steered:")
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
