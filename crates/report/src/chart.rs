//! Chart descriptions: data and axes only. [`crate::svg`] draws them.

use crate::level::Level;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chart {
    /// File-name stem of the chart in Markdown output and its `data-chart` id in HTML.
    pub id: String,
    pub title: String,
    /// One sentence saying what to look for (caption and accessible description).
    pub description: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    /// Reference lines: thresholds, the end of warm-up, a knee.
    pub rules: Vec<Rule>,
    /// Shaded x ranges (warm-up).
    pub bands: Vec<Band>,
    /// Plot height in pixels (the width is fixed); small charts for the method section.
    pub height: u32,
}

impl Chart {
    pub fn new(id: &str, title: &str, x: Axis, y: Axis) -> Self {
        Self {
            id: id.to_string(),
            title: title.to_string(),
            description: String::new(),
            x,
            y,
            series: Vec::new(),
            rules: Vec::new(),
            bands: Vec::new(),
            height: 300,
        }
    }

    pub fn describe(mut self, text: impl Into<String>) -> Self {
        self.description = text.into();
        self
    }

    pub fn series(mut self, s: Series) -> Self {
        self.series.push(s);
        self
    }

    pub fn rule(mut self, r: Rule) -> Self {
        self.rules.push(r);
        self
    }

    pub fn height(mut self, h: u32) -> Self {
        self.height = h;
        self
    }

    /// True when no series has a point: the chart draws "no data".
    pub fn is_empty(&self) -> bool {
        self.series.iter().all(|s| s.points.is_empty())
    }
}

/// What the numbers on an axis are, for tick labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Millis,
    Seconds,
    PerSecond,
    /// 0–1, shown as a percentage.
    Fraction,
    /// Already a percentage (CPU in % of one core can exceed 100).
    Percent,
    Bytes,
    Count,
    Plain,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    Linear,
    Log,
    /// x is a quantile q in [0, 1): drawn as log10(1 / (1 − q)), HdrHistogram's percentile plot.
    Percentile,
    /// x is the index of a category (`Axis::categories`).
    Category,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Axis {
    pub label: String,
    pub unit: Unit,
    pub scale: Scale,
    pub categories: Vec<String>,
    /// Start a linear axis at zero (latency, throughput) rather than at the data's minimum.
    pub from_zero: bool,
    /// A fixed data range for a linear axis instead of the data's: the time charts of a run
    /// share one, so they have the same x range and ticks and line up on the page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<(f64, f64)>,
}

impl Axis {
    pub fn linear(label: &str, unit: Unit) -> Self {
        Self {
            label: label.to_string(),
            unit,
            scale: Scale::Linear,
            categories: Vec::new(),
            from_zero: true,
            range: None,
        }
    }

    /// Seconds since the start of a run, from 0 to `end_s`: the x axis of every time chart.
    pub fn time(end_s: f64) -> Self {
        Self {
            range: Some((0.0, end_s.max(1.0))),
            ..Self::linear("time since start (s)", Unit::Seconds)
        }
    }

    pub fn log(label: &str, unit: Unit) -> Self {
        Self {
            scale: Scale::Log,
            ..Self::linear(label, unit)
        }
    }

    pub fn percentile(label: &str) -> Self {
        Self {
            scale: Scale::Percentile,
            ..Self::linear(label, Unit::Plain)
        }
    }

    pub fn categories(label: &str, names: Vec<String>) -> Self {
        Self {
            scale: Scale::Category,
            categories: names,
            ..Self::linear(label, Unit::Plain)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SeriesKind {
    Line,
    /// Constant over each interval (a load plan).
    Step,
    Points,
    /// Vertical bars from zero.
    Bars,
    /// A filled area from zero up to the line. Stacked areas are drawn as cumulative
    /// series, largest first, so each band shows one share.
    Area,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    pub name: String,
    pub kind: SeriesKind,
    pub points: Vec<(f64, f64)>,
    /// Per-point interval `(lo, hi)` drawn as an error bar (same length as `points`, or empty).
    pub intervals: Vec<(f64, f64)>,
    /// Palette index (series of one variant share a colour across charts).
    pub color: usize,
    pub dashed: bool,
}

impl Series {
    pub fn new(name: &str, kind: SeriesKind, color: usize, points: Vec<(f64, f64)>) -> Self {
        Self {
            name: name.to_string(),
            kind,
            points,
            intervals: Vec::new(),
            color,
            dashed: false,
        }
    }

    pub fn dashed(mut self) -> Self {
        self.dashed = true;
        self
    }

    pub fn with_intervals(mut self, intervals: Vec<(f64, f64)>) -> Self {
        self.intervals = intervals;
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleAxis {
    X,
    Y,
}

/// A labelled reference line across the plot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rule {
    pub axis: RuleAxis,
    pub value: f64,
    pub label: String,
    pub level: Level,
}

impl Rule {
    pub fn x(value: f64, label: impl Into<String>, level: Level) -> Self {
        Self {
            axis: RuleAxis::X,
            value,
            label: label.into(),
            level,
        }
    }

    pub fn y(value: f64, label: impl Into<String>, level: Level) -> Self {
        Self {
            axis: RuleAxis::Y,
            value,
            label: label.into(),
            level,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Band {
    pub from: f64,
    pub to: f64,
    pub label: String,
}
