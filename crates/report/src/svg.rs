//! Charts as hand-written SVG: small, deterministic, no fonts or external files needed.
//!
//! Why not `plotters`: its SVG backend emits one element per glyph-free text run but positions
//! everything itself, has no percentile or category axes, and its output changes with its
//! version, which breaks golden files. The charts a report needs (lines, steps, points with
//! intervals, bars, reference lines, log and percentile axes) take a few hundred lines here, and
//! the browser renders the text with the reader's fonts.

use crate::chart::{Axis, Chart, RuleAxis, Scale, SeriesKind, Unit};
use crate::doc::Level;
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

/// Maps data values to pixels along one axis.
struct Mapping {
    scale: Scale,
    lo: f64,
    hi: f64,
    px0: f64,
    px1: f64,
    ticks: Vec<(f64, String)>,
}

impl Mapping {
    fn t(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Log => v.max(1e-12).log10(),
            Scale::Percentile => percentile_t(v),
            _ => v,
        }
    }

    fn px(&self, v: f64) -> f64 {
        let t = self.t(v);
        let span = (self.hi - self.lo).max(1e-12);
        self.px0 + (t - self.lo) / span * (self.px1 - self.px0)
    }
}

fn percentile_t(q: f64) -> f64 {
    let q = q.clamp(0.0, 1.0 - 1e-9);
    -(1.0 - q).log10()
}

fn axis_values(c: &Chart, x: bool) -> Vec<f64> {
    let mut v = Vec::new();
    for s in &c.series {
        for (i, &(px, py)) in s.points.iter().enumerate() {
            if x {
                v.push(px);
            } else {
                v.push(py);
                if let Some(&(lo, hi)) = s.intervals.get(i) {
                    v.push(lo);
                    v.push(hi);
                }
                if s.kind == SeriesKind::Bars {
                    v.push(0.0);
                }
            }
        }
    }
    for r in &c.rules {
        if (r.axis == RuleAxis::X) == x {
            v.push(r.value);
        }
    }
    if x {
        for b in &c.bands {
            v.push(b.from);
            v.push(b.to);
        }
    }
    v.retain(|x| x.is_finite());
    v
}

fn mapping(axis: &Axis, values: &[f64], px0: f64, px1: f64) -> Mapping {
    let (lo, hi, ticks) = match axis.scale {
        Scale::Category => {
            let n = axis.categories.len().max(1);
            let ticks = axis
                .categories
                .iter()
                .enumerate()
                .map(|(i, c)| (i as f64, shorten(c, 22)))
                .collect();
            (-0.5, n as f64 - 0.5, ticks)
        }
        Scale::Percentile => {
            let max_t = values.iter().map(|&q| percentile_t(q)).fold(2.0, f64::max);
            let top = max_t.ceil().min(7.0);
            let ticks = (0..=top as i32)
                .map(|k| {
                    let q = 1.0 - 10f64.powi(-k);
                    let label = if k == 0 {
                        "0%".to_string()
                    } else {
                        format!("{}%", trim(q * 100.0, k as usize))
                    };
                    (q, label)
                })
                .collect();
            (0.0, top, ticks)
        }
        Scale::Log => {
            let pos: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
            let (mn, mx) = min_max(&pos).unwrap_or((1.0, 10.0));
            let lo = mn.log10().floor();
            let mut hi = mx.log10().ceil();
            if hi <= lo {
                hi = lo + 1.0;
            }
            let mut ticks = Vec::new();
            let few = hi - lo <= 2.0;
            for k in lo as i32..=hi as i32 {
                let base = 10f64.powi(k);
                ticks.push((base, fmt_tick(axis.unit, base)));
                if few && (k as f64) < hi {
                    for m in [2.0, 5.0] {
                        ticks.push((base * m, fmt_tick(axis.unit, base * m)));
                    }
                }
            }
            (lo, hi, ticks)
        }
        Scale::Linear => {
            let (mut mn, mut mx) = min_max(values).unwrap_or((0.0, 1.0));
            if axis.from_zero {
                mn = mn.min(0.0);
            }
            if mx - mn < 1e-9 {
                mx = mn + if mn.abs() > 0.0 { mn.abs() } else { 1.0 };
            }
            let step = nice_step((mx - mn) / 5.0);
            let lo = (mn / step).floor() * step;
            let hi = (mx / step).ceil() * step;
            let n = ((hi - lo) / step).round() as i64;
            let ticks = (0..=n)
                .map(|i| {
                    let v = lo + i as f64 * step;
                    (v, fmt_tick(axis.unit, v))
                })
                .collect();
            (lo, hi, ticks)
        }
    };
    let mut m = Mapping {
        scale: axis.scale,
        lo,
        hi,
        px0,
        px1,
        ticks: Vec::new(),
    };
    // Tick positions are in data space; keep those inside the range.
    m.ticks = ticks
        .into_iter()
        .filter(|(v, _)| {
            let t = m.t(*v);
            t >= lo - 1e-9 && t <= hi + 1e-9
        })
        .collect();
    m
}

fn min_max(v: &[f64]) -> Option<(f64, f64)> {
    let mut it = v.iter().copied();
    let first = it.next()?;
    Some(it.fold((first, first), |(a, b), x| (a.min(x), b.max(x))))
}

fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let f = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 2.5 {
        2.5
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    f * mag
}

/// `x` with at most `decimals` decimals, trailing zeros dropped.
fn trim(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".to_string()
    } else {
        s
    }
}

fn fmt_plain(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6, 2))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3, 1))
    } else {
        trim(v, 3)
    }
}

fn fmt_tick(unit: Unit, v: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    match unit {
        Unit::Millis => {
            let a = v.abs();
            if a < 1.0 {
                format!("{}µs", trim(v * 1000.0, 1))
            } else if a < 1000.0 {
                format!("{}ms", trim(v, 2))
            } else if a < 60_000.0 {
                format!("{}s", trim(v / 1000.0, 2))
            } else {
                format!("{}m", trim(v / 60_000.0, 1))
            }
        }
        Unit::Seconds => format!("{}s", trim(v, 2)),
        Unit::PerSecond => format!("{}/s", fmt_plain(v)),
        Unit::Fraction => format!("{}%", trim(v * 100.0, 2)),
        Unit::Count | Unit::Plain => fmt_plain(v),
    }
}

/// A value as shown in point tooltips.
fn fmt_value(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Millis => crate::format::format_ms(v),
        Unit::Fraction => crate::format::format_fraction(v),
        Unit::PerSecond => crate::format::format_rate(v),
        Unit::Seconds => format!("{}s", trim(v, 2)),
        Unit::Count | Unit::Plain => trim(v, 3),
    }
}

fn shorten(s: &str, n: usize) -> String {
    crate::format::truncate(s, n)
}

fn f(x: f64) -> String {
    trim(x, 1)
}

/// Draws `chart` as a standalone SVG document (also valid inline in HTML).
pub fn render_svg(chart: &Chart) -> String {
    let c = chart;
    let height = c.height.max(140) as f64;
    let (x0, x1) = (LEFT, WIDTH - RIGHT);
    let (y0, y1) = (height - BOTTOM, TOP);
    let xm = mapping(&c.x, &axis_values(c, true), x0, x1);
    let ym = mapping(&c.y, &axis_values(c, false), y0, y1);
    let mut s = String::new();
    let id = escape(&c.id);
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" \
         class=\"chart\" data-chart=\"{id}\" role=\"img\" aria-labelledby=\"{id}-title {id}-desc\" \
         font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif\" font-size=\"11\">",
        w = f(WIDTH),
        h = f(height),
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
        f(height)
    );
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"18\" font-size=\"13\" font-weight=\"600\" fill=\"#1f2328\">{}</text>",
        f(LEFT),
        escape(&c.title)
    );
    legend(&mut s, c);
    // Bands under everything.
    for b in &c.bands {
        let (a, z) = (xm.px(b.from).max(x0), xm.px(b.to).min(x1));
        if z > a {
            let _ = write!(
                s,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#eef1f4\"/><text x=\"{}\" y=\"{}\" fill=\"#57606a\" font-size=\"10\">{}</text>",
                f(a), f(y1), f(z - a), f(y0 - y1), f(a + 4.0), f(y1 + 12.0), escape(&b.label)
            );
        }
    }
    // Grid and ticks.
    for (v, label) in &ym.ticks {
        let y = ym.px(*v);
        let _ = write!(
            s,
            "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#d8dee4\" stroke-width=\"1\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#57606a\">{}</text>",
            f(x0), f(x1), f(x0 - 6.0), f(y + 3.5), escape(label), y = f(y)
        );
    }
    let every = (xm.ticks.len() / 12).max(1);
    for (i, (v, label)) in xm.ticks.iter().enumerate() {
        let x = xm.px(*v);
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
        f(height - 8.0),
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
    let _ = write!(
        s,
        "<clipPath id=\"{id}-clip\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath><g clip-path=\"url(#{id}-clip)\">",
        f(x0 - 4.0),
        f(y1 - 4.0),
        f(x1 - x0 + 8.0),
        f(y0 - y1 + 8.0)
    );
    for series in &c.series {
        draw_series(&mut s, c, series, &xm, &ym, (y0, y1));
    }
    s.push_str("</g>");
    for r in &c.rules {
        let color = level_color(r.level);
        match r.axis {
            RuleAxis::Y => {
                let y = ym.px(r.value);
                let _ = write!(
                    s,
                    "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{color}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{color}\" font-size=\"10\">{}</text>",
                    f(x0), f(x1), f(x1 - 2.0), f(y - 4.0), escape(&r.label), y = f(y)
                );
            }
            RuleAxis::X => {
                let x = xm.px(r.value);
                let _ = write!(
                    s,
                    "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{color}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/><text x=\"{}\" y=\"{}\" fill=\"{color}\" font-size=\"10\">{}</text>",
                    f(y1), f(y0), f(x + 4.0), f(y1 + 24.0), escape(&r.label), x = f(x)
                );
            }
        }
    }
    s.push_str("</svg>");
    s
}

fn legend(s: &mut String, c: &Chart) {
    let named: Vec<_> = c.series.iter().filter(|s| !s.name.is_empty()).collect();
    if named.is_empty() {
        return;
    }
    let mut x = LEFT;
    let mut y = 36.0;
    for series in named {
        let w = 26.0 + 6.5 * series.name.chars().count() as f64;
        if x + w > WIDTH - RIGHT {
            x = LEFT;
            y += 14.0;
        }
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
            SeriesKind::Bars => {
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
        x += w + 10.0;
    }
}

fn draw_series(
    s: &mut String,
    c: &Chart,
    series: &crate::chart::Series,
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
    let dash = if series.dashed {
        " stroke-dasharray=\"5 3\""
    } else {
        ""
    };
    let tip = |i: usize| {
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
    };
    match series.kind {
        SeriesKind::Line | SeriesKind::Step => {
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
                        tip(i)
                    );
                }
            }
        }
        SeriesKind::Points => {
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
                    tip(i)
                );
            }
        }
        SeriesKind::Bars => {
            let mut xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
            xs.sort_by(|a, b| a.total_cmp(b));
            let gap = xs
                .windows(2)
                .map(|w| w[1] - w[0])
                .filter(|g| *g > 0.5)
                .fold(f64::INFINITY, f64::min);
            let width = if gap.is_finite() { gap * 0.8 } else { 24.0 }.clamp(1.0, 48.0);
            let base = ym.px(0.0).min(y0);
            for (i, (x, y)) in pts.iter().enumerate() {
                let top = y.min(base);
                let _ = write!(
                    s,
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{color}\" fill-opacity=\"0.8\"><title>{}</title></rect>",
                    f(x - width / 2.0),
                    f(top),
                    f(width),
                    f((base - y).abs()),
                    tip(i)
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
    fn ticks_and_labels() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(23.0), 25.0);
        assert_eq!(fmt_tick(Unit::Millis, 0.5), "500µs");
        assert_eq!(fmt_tick(Unit::Millis, 2500.0), "2.5s");
        assert_eq!(fmt_tick(Unit::Fraction, 0.05), "5%");
        assert_eq!(fmt_tick(Unit::PerSecond, 12000.0), "12k/s");
        assert_eq!(trim(99.9, 1), "99.9");
    }

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
}
