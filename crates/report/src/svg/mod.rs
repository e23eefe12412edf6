//! Charts as hand-written SVG: small, deterministic, no fonts or external files needed.
//!
//! Why not `plotters`: its SVG backend emits one element per glyph-free text run but positions
//! everything itself, has no percentile or category axes, and its output changes with its
//! version, which breaks golden files. The charts a report needs (lines, steps, points with
//! intervals, bars, reference lines, log and percentile axes) take a few hundred lines here, and
//! the browser renders the text with the reader's fonts.
//!
//! This file lays out the chart (frame, axes, rules, bands, title) and writes the document;
//! `scale` maps data to pixels, `labels` formats tick and tooltip text, `series` draws the
//! legend and the data.

mod labels;
mod scale;
mod series;

use crate::chart::{Chart, RuleAxis, Scale};
use crate::doc::Level;
use labels::f;
use scale::{axis_values, mapping, Mapping};
use series::{draw_series, legend, legend_rows, LEGEND_ROW};
use std::fmt::Write;

const WIDTH: f64 = 760.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 52.0;
const BOTTOM: f64 = 46.0;

/// Okabe–Ito: distinguishable with colour-blindness, and in print.
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#7F7F7F", "#000000",
];

fn level_color(l: Level) -> &'static str {
    match l {
        Level::Pass => "#1a7f37",
        Level::Fail => "#cf222e",
        Level::Warn => "#9a6700",
        Level::Info => "#57606a",
    }
}

pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Where the plot sits in the chart and how data maps to it: `x0..x1` left to right,
/// `y0` the bottom (the x axis) and `y1` the top of the plot, in pixels.
struct Plot {
    height: f64,
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    xm: Mapping,
    ym: Mapping,
}

impl Plot {
    fn of(c: &Chart) -> Self {
        // Extra legend rows push the plot down (and the chart grows by as much), so the legend
        // never overlaps the plot, its warm-up shading or its lines.
        let extra = LEGEND_ROW * legend_rows(c).saturating_sub(1) as f64;
        let height = c.height.max(140) as f64 + extra;
        let (x0, x1) = (LEFT, WIDTH - RIGHT);
        let (y0, y1) = (height - BOTTOM, TOP + extra);
        Self {
            height,
            x0,
            x1,
            y0,
            y1,
            xm: mapping(&c.x, &axis_values(c, true), x0, x1),
            ym: mapping(&c.y, &axis_values(c, false), y0, y1),
        }
    }
}

/// Draws `chart` as a standalone SVG document (also valid inline in HTML).
pub fn render_svg(chart: &Chart) -> String {
    let c = chart;
    let p = Plot::of(c);
    let mut s = String::new();
    open_document(&mut s, c, &p);
    legend(&mut s, c);
    // Bands under everything; their labels over everything (stacked areas would hide them).
    let bands = band_spans(c, &p);
    shade_bands(&mut s, &bands, &p);
    grid_and_ticks(&mut s, c, &p);
    axes(&mut s, c, &p);
    data(&mut s, c, &p);
    band_labels(&mut s, &bands, &p);
    rules(&mut s, c, &p);
    s.push_str("</svg>");
    s
}

/// The `<svg>` element with its accessible title and description, the background and the
/// visible title.
fn open_document(s: &mut String, c: &Chart, p: &Plot) {
    let id = escape(&c.id);
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" \
         class=\"chart\" data-chart=\"{id}\" role=\"img\" aria-labelledby=\"{id}-title {id}-desc\" \
         font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif\" font-size=\"11\">",
        w = f(WIDTH),
        h = f(p.height),
    );
    let _ = write!(
        s,
        "<title id=\"{id}-title\">{}</title><desc id=\"{id}-desc\">{}</desc>",
        escape(&c.title),
        escape(&c.description)
    );
    let _ = write!(
        s,
        "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>",
        f(WIDTH),
        f(p.height)
    );
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"18\" font-size=\"13\" font-weight=\"600\" fill=\"#1f2328\">{}</text>",
        f(LEFT),
        escape(&c.title)
    );
}

/// The bands clipped to the plot, in pixels, with their labels; empty ones left out.
fn band_spans<'a>(c: &'a Chart, p: &Plot) -> Vec<(f64, f64, &'a str)> {
    c.bands
        .iter()
        .map(|b| {
            let from = p.xm.px(b.from).max(p.x0);
            let to = p.xm.px(b.to).min(p.x1);
            (from, to, b.label.as_str())
        })
        .filter(|(a, z, _)| z > a)
        .collect()
}

fn shade_bands(s: &mut String, bands: &[(f64, f64, &str)], p: &Plot) {
    for (a, z, _) in bands {
        let _ = write!(
            s,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#eef1f4\"/>",
            f(*a),
            f(p.y1),
            f(z - a),
            f(p.y0 - p.y1)
        );
    }
}

fn band_labels(s: &mut String, bands: &[(f64, f64, &str)], p: &Plot) {
    for (a, _, label) in bands {
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" fill=\"#57606a\" font-size=\"10\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\" class=\"band-label\">{}</text>",
            f(a + 4.0),
            f(p.y1 + 12.0),
            escape(label)
        );
    }
}

/// Horizontal grid lines with the y tick labels; x ticks (at most about 12 labelled), with
/// vertical grid lines on a percentile axis.
fn grid_and_ticks(s: &mut String, c: &Chart, p: &Plot) {
    let (x0, x1, y0, y1) = (p.x0, p.x1, p.y0, p.y1);
    for (v, label) in &p.ym.ticks {
        let y = p.ym.px(*v);
        let _ = write!(
            s,
            "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#d8dee4\" stroke-width=\"1\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#57606a\">{}</text>",
            f(x0), f(x1), f(x0 - 6.0), f(y + 3.5), escape(label), y = f(y)
        );
    }
    let every = (p.xm.ticks.len() / 12).max(1);
    for (i, (v, label)) in p.xm.ticks.iter().enumerate() {
        let x = p.xm.px(*v);
        let _ = write!(
            s,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"#8c959f\" stroke-width=\"1\"/>",
            f(y0),
            f(y0 + 4.0),
            x = f(x)
        );
        if c.x.scale == Scale::Percentile {
            let _ = write!(
                s,
                "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"#eaeef2\" stroke-width=\"1\"/>",
                f(y1),
                f(y0),
                x = f(x)
            );
        }
        if i % every == 0 {
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#57606a\">{}</text>",
                f(x),
                f(y0 + 16.0),
                escape(label)
            );
        }
    }
}

/// The x axis line, both axis labels, and "no data" on an empty chart.
fn axes(s: &mut String, c: &Chart, p: &Plot) {
    let (x0, x1, y0, y1) = (p.x0, p.x1, p.y0, p.y1);
    let _ = write!(
        s,
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#8c959f\" stroke-width=\"1\"/>",
        f(x0),
        f(y0),
        f(x1),
        f(y0)
    );
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#1f2328\">{}</text>",
        f((x0 + x1) / 2.0),
        f(p.height - 8.0),
        escape(&c.x.label)
    );
    let _ = write!(
        s,
        "<text transform=\"translate(14 {}) rotate(-90)\" text-anchor=\"middle\" fill=\"#1f2328\">{}</text>",
        f((y0 + y1) / 2.0),
        escape(&c.y.label)
    );
    if c.is_empty() {
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#57606a\" font-size=\"13\">no data</text>",
            f((x0 + x1) / 2.0),
            f((y0 + y1) / 2.0)
        );
    }
}

/// The series, clipped to the plot (with a few pixels to spare for markers on its edge).
fn data(s: &mut String, c: &Chart, p: &Plot) {
    let id = escape(&c.id);
    let _ = write!(
        s,
        "<clipPath id=\"{id}-clip\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath><g clip-path=\"url(#{id}-clip)\">",
        f(p.x0 - 4.0),
        f(p.y1 - 4.0),
        f(p.x1 - p.x0 + 8.0),
        f(p.y0 - p.y1 + 8.0)
    );
    for series in &c.series {
        draw_series(s, c, series, &p.xm, &p.ym, (p.y0, p.y1));
    }
    s.push_str("</g>");
}

/// Reference lines, dashed in their level's colour, with their labels.
fn rules(s: &mut String, c: &Chart, p: &Plot) {
    let (x0, x1, y0, y1) = (p.x0, p.x1, p.y0, p.y1);
    for r in &c.rules {
        let color = level_color(r.level);
        match r.axis {
            RuleAxis::Y => {
                let y = p.ym.px(r.value);
                let _ = write!(
                    s,
                    "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{color}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{color}\" font-size=\"10\">{}</text>",
                    f(x0), f(x1), f(x1 - 2.0), f(y - 4.0), escape(&r.label), y = f(y)
                );
            }
            RuleAxis::X => {
                let x = p.xm.px(r.value);
                let _ = write!(
                    s,
                    "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{color}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/><text x=\"{}\" y=\"{}\" fill=\"{color}\" font-size=\"10\">{}</text>",
                    f(y1), f(y0), f(x + 4.0), f(y1 + 24.0), escape(&r.label), x = f(x)
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::{Axis, Chart, Rule, Series, SeriesKind, Unit};

    #[test]
    fn draws_every_kind() {
        let c = Chart::new(
            "t",
            "A & B",
            Axis::linear("time", Unit::Seconds),
            Axis::log("latency", Unit::Millis),
        )
        .series(Series::new(
            "p95",
            SeriesKind::Line,
            0,
            vec![(0.0, 1.0), (1.0, 20.0)],
        ))
        .series(Series::new("n", SeriesKind::Bars, 1, vec![(0.0, 3.0)]))
        .rule(Rule::y(10.0, "threshold", Level::Fail));
        let svg = render_svg(&c);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.contains("A &amp; B"));
        assert!(svg.contains("<path d=\"M"));
        assert!(svg.contains("<rect x="));
        assert!(svg.contains("threshold"));
        assert!(!svg.contains("NaN"));
        let empty = Chart::new(
            "e",
            "empty",
            Axis::percentile("percentile"),
            Axis::linear("latency", Unit::Millis),
        );
        assert!(render_svg(&empty).contains("no data"));
    }

    /// The warm-up label is drawn after the data, so stacked CPU areas cannot cover it.
    #[test]
    fn band_labels_sit_above_filled_areas() {
        let mut c = Chart::new(
            "cpu",
            "CPU",
            Axis::time(10.0),
            Axis::linear("cpu", Unit::Percent),
        )
        .series(Series::new(
            "generator",
            SeriesKind::Area,
            0,
            vec![(0.0, 90.0), (10.0, 90.0)],
        ));
        c.bands.push(crate::chart::Band {
            from: 0.0,
            to: 2.0,
            label: "warm-up (excluded)".into(),
        });
        let svg = render_svg(&c);
        let shading = svg.find("fill=\"#eef1f4\"").expect("band drawn");
        let area = svg.find("<g clip-path").expect("data drawn");
        let label = svg.find(">warm-up (excluded)<").expect("label drawn");
        assert!(shading < area && area < label, "{svg}");
    }

    #[test]
    fn the_legend_never_hides_under_the_plot() {
        let mut c = Chart::new(
            "many",
            "many series",
            Axis::time(10.0),
            Axis::linear("latency", Unit::Millis),
        );
        for i in 0..12 {
            c = c.series(Series::new(
                &format!("variant number {i} p95"),
                SeriesKind::Line,
                i,
                vec![(0.0, 1.0), (10.0, 2.0)],
            ));
        }
        c.bands.push(crate::chart::Band {
            from: 0.0,
            to: 2.0,
            label: "warm-up (excluded)".into(),
        });
        assert!(legend_rows(&c) > 2);
        let svg = render_svg(&c);
        let legend_bottom = svg
            .split("<text x=\"")
            .skip(1)
            .filter(|t| t.split('<').next().unwrap_or("").contains("variant number"))
            .map(|t| {
                let y = t.split("y=\"").nth(1).unwrap().split('"').next().unwrap();
                y.parse::<f64>().unwrap()
            })
            .fold(0.0, f64::max);
        let shading_top: f64 = svg
            .split("fill=\"#eef1f4\"")
            .next()
            .and_then(|head| head.rsplit("<rect x=\"").next())
            .and_then(|r| r.split("y=\"").nth(1))
            .and_then(|y| y.split('"').next())
            .and_then(|y| y.parse().ok())
            .expect("the warm-up band is drawn");
        assert!(
            legend_bottom < shading_top,
            "legend row at y={legend_bottom} under the shading from y={shading_top}"
        );
        // The chart grew by the extra rows instead of squeezing the plot.
        assert!(svg.contains(&format!("height=\"{}\"", 300 + 14 * (legend_rows(&c) - 1))));
    }

    #[test]
    fn counts_get_whole_number_ticks_and_fixed_ranges_are_kept() {
        let counts = mapping(
            &Axis::linear("in flight", Unit::Count),
            &[0.0, 1.0, 2.0],
            0.0,
            100.0,
        );
        assert!(
            counts.ticks.iter().all(|(v, _)| v.fract() == 0.0),
            "{:?}",
            counts.ticks
        );
        let time = mapping(&Axis::time(13.2), &[0.0, 3.0], 0.0, 100.0);
        assert_eq!(time.lo, 0.0);
        assert_eq!(time.hi, 13.2, "the axis ends where the run ended");
        assert_eq!(time.ticks.last().map(|t| t.0), Some(10.0));
    }
}
