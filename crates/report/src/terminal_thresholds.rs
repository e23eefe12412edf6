//! The end-of-run summary's pass/fail lists: each check of the scenario with its failures,
//! and each threshold with its actual value, so a failure is named, not just counted.

use crate::format::Unit;
use crate::terminal_lines::kv;
use crate::Style;
use loadlab_metrics::result::RunResult;
use std::io::{self, Write};

/// Every `check:` of the scenario with its failures, so a failing check is named, not just counted.
pub(crate) fn checks(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
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

pub(crate) fn thresholds(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
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
