//! The legend and the data of a chart: lines, steps, points with intervals and bars.

use super::labels::{f, fmt_value, trim};
use super::scale::Mapping;
use super::{escape, LEFT, PALETTE, RIGHT, WIDTH};
use crate::chart::{Chart, Scale, Series, SeriesKind};
use std::fmt::Write;

/// Height of one row of the legend.
pub(super) const LEGEND_ROW: f64 = 14.0;

/// Where each named series' legend entry goes: `(x, baseline y, series)`, wrapping onto new
/// rows of [`LEGEND_ROW`] when the width runs out.
fn legend_layout(c: &Chart) -> Vec<(f64, f64, &Series)> {
    let mut out = Vec::new();
    let mut x = LEFT;
    let mut y = 36.0;
    for series in c.series.iter().filter(|s| !s.name.is_empty()) {
        let w = 26.0 + 6.5 * series.name.chars().count() as f64;
        if x + w > WIDTH - RIGHT && x > LEFT {
            x = LEFT;
            y += LEGEND_ROW;
        }
        out.push((x, y, series));
        x += w + 10.0;
    }
    out
}

/// Rows the legend takes (the plot starts below the last one, so no row hides under the
/// plot's shading or lines).
pub(super) fn legend_rows(c: &Chart) -> usize {
    let layout = legend_layout(c);
    match (layout.first(), layout.last()) {
        (Some(first), Some(last)) => ((last.1 - first.1) / LEGEND_ROW).round() as usize + 1,
        _ => 0,
    }
}

pub(super) fn legend(s: &mut String, c: &Chart) {
    for (x, y, series) in legend_layout(c) {
        let color = PALETTE[series.color % PALETTE.len()];
        match series.kind {
            SeriesKind::Points => {
                let _ = write!(
                    s,
                    "<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{color}\"/>",
                    f(x + 8.0),
                    f(y - 4.0)
                );
            }
            SeriesKind::Bars | SeriesKind::Area => {
                let _ = write!(
                    s,
                    "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"9\" fill=\"{color}\" opacity=\"0.8\"/>",
                    f(x + 2.0),
                    f(y - 9.0)
                );
            }
            _ => {
                let dash = if series.dashed {
                    " stroke-dasharray=\"5 3\""
                } else {
                    ""
                };
                let _ = write!(
                    s,
                    "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{color}\" stroke-width=\"2.5\"{dash}/>",
                    f(x),
                    f(y - 4.0),
                    f(x + 16.0),
                    f(y - 4.0)
                );
            }
        }
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" fill=\"#1f2328\">{}</text>",
            f(x + 20.0),
            f(y),
            escape(&series.name)
        );
    }
}

/// Draws one series in its kind's shape; `y0` is the bottom of the plot, where bars and
/// areas start when zero lies below it.
pub(super) fn draw_series(
    s: &mut String,
    c: &Chart,
    series: &Series,
    xm: &Mapping,
    ym: &Mapping,
    (y0, _y1): (f64, f64),
) {
    let color = PALETTE[series.color % PALETTE.len()];
    let pts: Vec<(f64, f64)> = series
        .points
        .iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .map(|&(x, y)| (xm.px(x), ym.px(y)))
        .collect();
    if pts.is_empty() {
        return;
    }
    let base = ym.px(0.0).min(y0);
    match series.kind {
        SeriesKind::Line | SeriesKind::Step => draw_line(s, c, series, &pts, color),
        SeriesKind::Points => draw_points(s, c, series, &pts, ym, color),
        SeriesKind::Area => draw_area(s, series, &pts, base, color),
        SeriesKind::Bars => draw_bars(s, c, series, &pts, base, color),
    }
}

/// The tooltip of point `i`: the series, its value (with its interval) and where it is.
fn tooltip(c: &Chart, series: &Series, i: usize) -> String {
    let (x, y) = series.points[i];
    let xs = match c.x.scale {
        Scale::Category => {
            c.x.categories
                .get(x.round() as usize)
                .cloned()
                .unwrap_or_default()
        }
        Scale::Percentile => format!("p{}", trim(x * 100.0, 4)),
        _ => fmt_value(c.x.unit, x),
    };
    let mut t = format!("{}: {} at {}", series.name, fmt_value(c.y.unit, y), xs);
    if let Some(&(lo, hi)) = series.intervals.get(i) {
        let _ = write!(
            t,
            " [{}, {}]",
            fmt_value(c.y.unit, lo),
            fmt_value(c.y.unit, hi)
        );
    }
    escape(&t)
}

/// A line or a step line; a short one also gets a marker (with its tooltip) at each point.
fn draw_line(s: &mut String, c: &Chart, series: &Series, pts: &[(f64, f64)], color: &str) {
    let dash = if series.dashed {
        " stroke-dasharray=\"5 3\""
    } else {
        ""
    };
    let mut d = String::new();
    for (i, (x, y)) in pts.iter().enumerate() {
        if i == 0 {
            let _ = write!(d, "M{} {}", f(*x), f(*y));
        } else if series.kind == SeriesKind::Step {
            let _ = write!(d, "H{}V{}", f(*x), f(*y));
        } else {
            let _ = write!(d, "L{} {}", f(*x), f(*y));
        }
    }
    let _ = write!(
        s,
        "<path d=\"{d}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"1.8\" stroke-linejoin=\"round\"{dash}><title>{}</title></path>",
        escape(&series.name)
    );
    if pts.len() <= 24 {
        for (i, (x, y)) in pts.iter().enumerate() {
            let _ = write!(
                s,
                "<circle cx=\"{}\" cy=\"{}\" r=\"2.5\" fill=\"{color}\"><title>{}</title></circle>",
                f(*x),
                f(*y),
                tooltip(c, series, i)
            );
        }
    }
}

/// Dots, each with its interval as an error bar when the series has intervals.
fn draw_points(
    s: &mut String,
    c: &Chart,
    series: &Series,
    pts: &[(f64, f64)],
    ym: &Mapping,
    color: &str,
) {
    for (i, (x, y)) in pts.iter().enumerate() {
        if let Some(&(lo, hi)) = series.intervals.get(i) {
            let (a, b) = (ym.px(lo), ym.px(hi));
            let _ = write!(
                s,
                "<path d=\"M{x} {a}V{b}M{l} {a}H{r}M{l} {b}H{r}\" stroke=\"{color}\" stroke-width=\"1.5\" fill=\"none\"/>",
                x = f(*x),
                a = f(a),
                b = f(b),
                l = f(x - 5.0),
                r = f(x + 5.0)
            );
        }
        let _ = write!(
            s,
            "<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{color}\" fill-opacity=\"0.75\" stroke=\"#ffffff\" stroke-width=\"0.8\"><title>{}</title></circle>",
            f(*x),
            f(*y),
            tooltip(c, series, i)
        );
    }
}

/// A filled area from `base` up to the line.
fn draw_area(s: &mut String, series: &Series, pts: &[(f64, f64)], base: f64, color: &str) {
    let mut d = format!("M{} {}", f(pts[0].0), f(base));
    for (x, y) in pts {
        let _ = write!(d, "L{} {}", f(*x), f(*y));
    }
    let _ = write!(d, "L{} {}Z", f(pts[pts.len() - 1].0), f(base));
    let _ = write!(
        s,
        "<path d=\"{d}\" fill=\"{color}\" fill-opacity=\"0.85\" stroke=\"{color}\" stroke-width=\"1\"><title>{}</title></path>",
        escape(&series.name)
    );
}

/// Bars from `base`, 80% as wide as the smallest gap between two bars (1 to 48 pixels).
fn draw_bars(
    s: &mut String,
    c: &Chart,
    series: &Series,
    pts: &[(f64, f64)],
    base: f64,
    color: &str,
) {
    let mut xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
    xs.sort_by(|a, b| a.total_cmp(b));
    let gap = xs
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|g| *g > 0.5)
        .fold(f64::INFINITY, f64::min);
    let width = if gap.is_finite() { gap * 0.8 } else { 24.0 }.clamp(1.0, 48.0);
    for (i, (x, y)) in pts.iter().enumerate() {
        let top = y.min(base);
        let _ = write!(
            s,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{color}\" fill-opacity=\"0.8\"><title>{}</title></rect>",
            f(x - width / 2.0),
            f(top),
            f(width),
            f((base - y).abs()),
            tooltip(c, series, i)
        );
    }
}
