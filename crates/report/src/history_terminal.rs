//! `loadlab history` as terminal text: a table per plan and the change points, so the words
//! the terminal shows live with the rest of the report's text and the pipeline only loads
//! the points.

use crate::verdict_words::format_value;
use loadlab_analysis::history::{History, HistoryPoint, PointKind};
use std::collections::BTreeMap;
use std::io::Write;

/// `commit=abc123` (the label a CI sets), else every label.
fn label_text(labels: &BTreeMap<String, String>) -> String {
    if let Some(commit) = labels.get("commit") {
        return commit.chars().take(12).collect();
    }
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The history as a table per plan, then its change points, for the terminal.
pub fn write_history(out: &mut dyn Write, h: &History, points: &[HistoryPoint], skipped: usize) {
    let what = match h.kind {
        PointKind::Run => "runs",
        PointKind::Study => "studies (median of the first variant, 95% CI)",
    };
    let _ = writeln!(
        out,
        "history of {}: {} {what}; change points by E-divisive means (p < {}, window {}, min magnitude {:.1}%)",
        h.name,
        points.len(),
        h.detector.max_p_value,
        h.detector.window,
        h.detector.min_magnitude * 100.0
    );
    if skipped > 0 {
        let _ = writeln!(out, "({skipped} invalid or partial run(s) left out)");
    }
    let mut plans: Vec<&Option<String>> = Vec::new();
    for s in &h.series {
        if !plans.contains(&&s.plan) {
            plans.push(&s.plan);
        }
    }
    for plan in plans {
        write_plan_table(out, h, plan);
    }
    if h.change_points.is_empty() {
        let _ = writeln!(out, "\nno change point");
        return;
    }
    let _ = writeln!(out, "\nchange points:");
    for cp in &h.change_points {
        let ci = cp
            .change_ci
            .map(|[lo, hi]| format!(" [{:+.1}%, {:+.1}%]", lo * 100.0, hi * 100.0))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {} at #{} ({} {}; before: {} {}): {:+.1}%{ci} {} (p {:.1e})",
            cp.metric.label(),
            cp.index,
            cp.run_id,
            label_text(&cp.labels),
            cp.before_id,
            label_text(&cp.before_labels),
            cp.change * 100.0,
            cp.verdict.as_str(),
            cp.p_value
        );
    }
}

/// One table per plan: a row per point, a column per metric, `◆` where a series changes.
fn write_plan_table(out: &mut dyn Write, h: &History, plan: &Option<String>) {
    let series: Vec<_> = h.series.iter().filter(|s| &s.plan == plan).collect();
    let Some(longest) = series.iter().map(|s| s.points.len()).max() else {
        return;
    };
    let plan_text = plan.as_deref().map_or("(none)", |p| &p[..p.len().min(12)]);
    let _ = writeln!(out, "\nplan {plan_text}");
    let _ = write!(out, "{:>4}  {:<20} {:<12}", "#", "started", "label");
    for s in &series {
        let _ = write!(out, " {:>16}", s.metric.to_string());
    }
    let _ = writeln!(out);
    let first = series
        .iter()
        .max_by_key(|s| s.points.len())
        .expect("a series");
    for i in 0..longest {
        let p = &first.points[i];
        let started: String = p.started_at.chars().take(19).collect();
        let _ = write!(
            out,
            "{:>4}  {:<20} {:<12}",
            i,
            started.replace('T', " "),
            label_text(&p.labels)
        );
        for s in &series {
            let cell = s.points.get(i).map_or(String::new(), |p| {
                let changed = h
                    .change_points
                    .iter()
                    .any(|c| c.metric == s.metric && &c.plan == plan && c.index == i);
                format!(
                    "{}{}",
                    if changed { "◆ " } else { "" },
                    format_value(s.metric.unit(), p.value)
                )
            });
            let _ = write!(out, " {cell:>16}");
        }
        let _ = writeln!(out);
    }
}
