//! The trend report of `loadlab history --report PATH`: one chart per series (a metric over
//! the points of one plan: each point with its 95% CI when it is a study, a dashed line at
//! every change point), the table of change points, and the detector's settings. HTML is one
//! self-contained file (inline SVG); Markdown references the charts as SVG files written
//! beside it. Rendered from the `loadlab.history.v1` record alone.

use crate::chart::{Axis, Chart, Rule, Series, SeriesKind, Unit};
use crate::doc::Level;
use crate::study_doc::metrics::metric_unit;
use crate::svg::render_svg;
use loadlab_analysis::history::{History, HistoryChangePoint, Series as HistorySeries};
use std::fmt::Write;

/// One chart per series: x is the point's index, y the metric.
pub fn history_charts(history: &History) -> Vec<Chart> {
    history
        .series
        .iter()
        .enumerate()
        .map(|(n, s)| series_chart(history, s, n))
        .collect()
}

fn series_chart(history: &History, series: &HistorySeries, n: usize) -> Chart {
    let label = series.metric.label();
    let points: Vec<(f64, f64)> = series
        .points
        .iter()
        .map(|p| (p.index as f64, p.value))
        .collect();
    // Points (with their CI as error bars for studies) rather than a line: each point is
    // its own measurement, not a sample of a continuous signal.
    let mut line = Series::new(&label, SeriesKind::Points, 0, points);
    // A study with fewer than 6 valid runs has no median CI: its bar is the point itself.
    if series.points.iter().any(|p| p.ci.is_some()) {
        line = line.with_intervals(
            series
                .points
                .iter()
                .map(|p| p.ci.map_or((p.value, p.value), |[lo, hi]| (lo, hi)))
                .collect(),
        );
    }
    let mut chart = Chart::new(
        &format!("history-{n}"),
        &format!("{label} over time"),
        Axis::linear("point (oldest first)", Unit::Plain),
        Axis {
            // The level and its change matter, not the distance from zero.
            from_zero: false,
            ..Axis::linear(&label, metric_unit(&series.metric))
        },
    )
    .describe(format!(
        "{label} of each {} of {}, oldest first; a dashed line marks each change point, bars are 95% CIs",
        kind_word(history),
        history.name
    ))
    .series(line);
    for cp in changes_of(history, series) {
        chart = chart.rule(Rule::x(
            cp.index as f64,
            format!("{:+.1}% {}", cp.change * 100.0, verdict_word(cp)),
            Level::Warn,
        ));
    }
    chart
}

fn changes_of<'a>(
    history: &'a History,
    series: &'a HistorySeries,
) -> impl Iterator<Item = &'a HistoryChangePoint> {
    history
        .change_points
        .iter()
        .filter(move |c| c.metric == series.metric && c.plan == series.plan)
}

fn kind_word(history: &History) -> &'static str {
    match history.kind {
        loadlab_analysis::history::PointKind::Run => "run",
        loadlab_analysis::history::PointKind::Study => "study (median, 95% CI)",
    }
}

fn verdict_word(cp: &HistoryChangePoint) -> &'static str {
    cp.verdict.as_str()
}

fn label_words(labels: &std::collections::BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The change points as Markdown table rows (shared by both renderers' text).
fn change_rows(history: &History) -> Vec<[String; 6]> {
    history
        .change_points
        .iter()
        .map(|cp| {
            let ci = cp.change_ci.map_or(String::new(), |[lo, hi]| {
                format!(" [{:+.1}%, {:+.1}%]", lo * 100.0, hi * 100.0)
            });
            [
                cp.metric.label(),
                format!("#{}", cp.index),
                format!("{} ({})", cp.run_id, label_words(&cp.labels)),
                format!("{} ({})", cp.before_id, label_words(&cp.before_labels)),
                format!("{:+.1}%{ci}", cp.change * 100.0),
                format!("{} (p {:.1e})", verdict_word(cp), cp.p_value),
            ]
        })
        .collect()
}

fn settings_words(history: &History) -> String {
    format!(
        "{} points per series, change points by {} (p < {}, window {}, min magnitude {:.1}%)",
        kind_word(history),
        history.detector.method,
        history.detector.max_p_value,
        history.detector.window,
        history.detector.min_magnitude * 100.0
    )
}

const HEADERS: [&str; 6] = [
    "metric",
    "at",
    "point",
    "before",
    "change (95% CI)",
    "verdict",
];

/// Markdown; `chart_file` names the SVG file of each chart (the caller writes them).
pub fn history_markdown(history: &History, chart_file: impl Fn(&Chart) -> String) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# History of {}\n", history.name);
    let _ = writeln!(md, "{}.\n", settings_words(history));
    md.push_str("## Change points\n\n");
    let rows = change_rows(history);
    if rows.is_empty() {
        md.push_str("No change point.\n\n");
    } else {
        let _ = writeln!(md, "| {} |", HEADERS.join(" | "));
        let _ = writeln!(md, "|{}", "---|".repeat(HEADERS.len()));
        for row in rows {
            let _ = writeln!(md, "| {} |", row.join(" | "));
        }
        md.push('\n');
    }
    md.push_str("## Trends\n\n");
    for chart in history_charts(history) {
        let _ = writeln!(md, "![{}]({})\n", chart.title, chart_file(&chart));
        let _ = writeln!(md, "{}\n", chart.description);
    }
    md
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One self-contained HTML file (charts inline, no network needed).
pub fn history_html(history: &History) -> String {
    let mut html =
        String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    let _ = write!(
        html,
        "<title>History of {0}</title><style>body{{font-family:sans-serif;max-width:960px;margin:2em auto}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left}}</style></head><body><h1>History of {0}</h1><p>{1}.</p><h2>Change points</h2>",
        escape(&history.name),
        escape(&settings_words(history))
    );
    let rows = change_rows(history);
    if rows.is_empty() {
        html.push_str("<p>No change point.</p>");
    } else {
        html.push_str("<table><tr>");
        for h in HEADERS {
            let _ = write!(html, "<th>{h}</th>");
        }
        html.push_str("</tr>");
        for row in rows {
            html.push_str("<tr>");
            for cell in row {
                let _ = write!(html, "<td>{}</td>", escape(&cell));
            }
            html.push_str("</tr>");
        }
        html.push_str("</table>");
    }
    html.push_str("<h2>Trends</h2>");
    for chart in history_charts(history) {
        let _ = write!(
            html,
            "<figure>{}<figcaption>{}</figcaption></figure>",
            render_svg(&chart),
            escape(&chart.description)
        );
    }
    html.push_str("</body></html>\n");
    html
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_analysis::change_points::ChangePointParams;
    use loadlab_analysis::history::{build_history, HistoryPoint, PointKind, PointValue};
    use loadlab_metrics::{LatencyStat, MetricId};
    use std::collections::BTreeMap;

    fn history() -> History {
        let metric = MetricId::latency(LatencyStat::P50);
        let points: Vec<HistoryPoint> = (0..30)
            .map(|i| {
                let level = if i < 20 { 2.3 } else { 2.5 };
                let wiggle = [0.0, 0.02, -0.01, 0.015, -0.02][i % 5];
                let value = level + wiggle;
                HistoryPoint {
                    id: format!("s{i:02}"),
                    kind: PointKind::Study,
                    started_at: String::new(),
                    labels: BTreeMap::from([("commit".into(), format!("night{i}"))]),
                    plan: Some("p".into()),
                    values: BTreeMap::from([(
                        metric.clone(),
                        PointValue {
                            value,
                            ci: (i % 2 == 0).then_some([value - 0.01, value + 0.01]),
                        },
                    )]),
                }
            })
            .collect();
        build_history(
            "nightly <ping>",
            PointKind::Study,
            &points,
            &[metric],
            &ChangePointParams::default(),
        )
        .unwrap()
    }

    #[test]
    fn a_chart_per_series_marks_its_change_points_and_cis() {
        let h = history();
        let charts = history_charts(&h);
        assert_eq!(charts.len(), 1);
        let chart = &charts[0];
        assert_eq!(chart.rules.len(), 1);
        assert_eq!(chart.rules[0].value, 20.0);
        assert_eq!(chart.series[0].intervals.len(), 30, "a bar for every point");
    }

    #[test]
    fn html_is_self_contained_and_markdown_names_its_charts() {
        let h = history();
        let html = history_html(&h);
        assert!(html.contains("<svg") && !html.contains("http://example"));
        assert!(html.contains("History of nightly &lt;ping&gt;"));
        assert!(html.contains("commit=night20"));
        let md = history_markdown(&h, |c| format!("h-{}.svg", c.id));
        assert!(
            md.contains("![p50 latency over time](h-history-0.svg)"),
            "{md}"
        );
        assert!(md.contains("| p50 latency | #20 |"), "{md}");
    }
}
