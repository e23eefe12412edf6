//! From one scrape to the recorded values: keep only the lines of the selected metrics
//! (a node_exporter page has thousands), parse them with `prometheus-parse`, pick the series
//! whose labels match, sum them, and turn counters into per-second rates.

use crate::sample::MetricKind;
use loadlab_scenario::monitor::{MatchOp, SeriesSelector};
use prometheus_parse::{Labels, Scrape, Value};
use std::collections::{HashMap, HashSet};

struct Matcher {
    label: String,
    op: MatchOp,
    value: String,
    regex: Option<regex::Regex>,
}

impl Matcher {
    fn matches(&self, labels: &Labels) -> bool {
        // PromQL: a missing label has the empty value.
        let v = labels.get(&self.label).unwrap_or("");
        match (self.op, &self.regex) {
            (MatchOp::Eq, _) => v == self.value,
            (MatchOp::Ne, _) => v != self.value,
            (MatchOp::Regex, Some(re)) => re.is_match(v),
            (MatchOp::NotRegex, Some(re)) => !re.is_match(v),
            _ => false,
        }
    }
}

/// A selector ready to match parsed samples.
pub struct Selection {
    pub text: String,
    metric: String,
    matchers: Vec<Matcher>,
    /// For `x_bucket{le="0.1"}`: the histogram `x` and the bucket bound.
    bucket: Option<(String, f64)>,
}

impl Selection {
    pub fn new(selector: &SeriesSelector) -> Self {
        let mut bucket = None;
        let mut matchers = Vec::new();
        for m in &selector.matchers {
            if let (Some(base), "le", MatchOp::Eq) = (
                selector.metric.strip_suffix("_bucket"),
                m.label.as_str(),
                m.op,
            ) {
                if let Some(le) = parse_float(&m.value) {
                    bucket = Some((base.to_string(), le));
                    continue;
                }
            }
            matchers.push(Matcher {
                label: m.label.clone(),
                op: m.op,
                value: m.value.clone(),
                regex: matches!(m.op, MatchOp::Regex | MatchOp::NotRegex)
                    .then(|| regex::Regex::new(&format!("^(?:{})$", m.value)).ok())
                    .flatten(),
            });
        }
        Selection {
            text: selector.text.clone(),
            metric: selector.metric.clone(),
            matchers,
            bucket,
        }
    }

    /// Names whose lines (samples and `# TYPE`) must be kept for this selector.
    fn names(&self, out: &mut HashSet<String>) {
        out.insert(self.metric.clone());
        for suffix in ["_bucket", "_count", "_sum", "_total"] {
            if let Some(base) = self.metric.strip_suffix(suffix) {
                out.insert(base.to_string());
            }
        }
    }
}

/// The lines of `body` that concern the selected metric names.
pub fn relevant_lines<'a>(body: &'a str, selections: &[Selection]) -> Vec<&'a str> {
    let mut names = HashSet::new();
    for s in selections {
        s.names(&mut names);
    }
    body.lines()
        .filter(|line| {
            let line = line.trim_start();
            let name = if let Some(rest) = line.strip_prefix('#') {
                let mut words = rest.split_whitespace();
                if words.next() != Some("TYPE") {
                    return false;
                }
                words.next().unwrap_or("")
            } else {
                let end = line
                    .find(|c: char| c == '{' || c.is_whitespace())
                    .unwrap_or(line.len());
                &line[..end]
            };
            names.contains(name)
        })
        .collect()
}

/// What one scrape yields for one selector: matched series by identity, and their kind.
pub struct Matched {
    pub kind: MetricKind,
    pub series: Vec<(String, f64)>,
}

/// Finds the samples a selection matches in a parsed scrape (`None`: nothing matched).
pub fn select(
    scrape: &Scrape,
    types: &HashMap<String, String>,
    sel: &Selection,
) -> Option<Matched> {
    let mut series = Vec::new();
    let mut kind = MetricKind::Gauge;
    for s in &scrape.samples {
        if !sel.matchers.iter().all(|m| m.matches(&s.labels)) {
            continue;
        }
        let value = match (&sel.bucket, &s.value) {
            (Some((base, le)), Value::Histogram(buckets)) if s.metric == *base => {
                kind = MetricKind::Counter;
                match buckets.iter().find(|b| same_bound(b.less_than, *le)) {
                    Some(b) => b.count,
                    None => continue,
                }
            }
            (None, v) if s.metric == sel.metric => match v {
                Value::Counter(x) => {
                    kind = MetricKind::Counter;
                    *x
                }
                Value::Gauge(x) => *x,
                Value::Untyped(x) => {
                    kind = untyped_kind(&sel.metric, types);
                    *x
                }
                Value::Histogram(_) | Value::Summary(_) => continue,
            },
            _ => continue,
        };
        series.push((format!("{}{{{}}}", s.metric, s.labels), value));
    }
    (!series.is_empty()).then_some(Matched { kind, series })
}

/// Samples without a type of their own: parts of a histogram or summary (`_count`, `_sum`)
/// and `_total` names are counters; anything else is read as a gauge.
fn untyped_kind(metric: &str, types: &HashMap<String, String>) -> MetricKind {
    for suffix in ["_count", "_sum", "_bucket"] {
        if let Some(base) = metric.strip_suffix(suffix) {
            if matches!(
                types.get(base).map(String::as_str),
                Some("histogram" | "summary")
            ) {
                return MetricKind::Counter;
            }
        }
    }
    match types.get(metric).map(String::as_str) {
        Some("counter") => MetricKind::Counter,
        Some(_) => MetricKind::Gauge,
        None if metric.ends_with("_total") => MetricKind::Counter,
        None => MetricKind::Gauge,
    }
}

/// `# TYPE name kind` lines, by name.
pub fn declared_types(lines: &[&str]) -> HashMap<String, String> {
    lines
        .iter()
        .filter_map(|l| {
            let mut w = l.trim_start().strip_prefix('#')?.split_whitespace();
            (w.next()? == "TYPE").then_some(())?;
            Some((w.next()?.to_string(), w.next()?.to_string()))
        })
        .collect()
}

fn same_bound(a: f64, b: f64) -> bool {
    a == b || (a.is_finite() && b.is_finite() && (a - b).abs() <= 1e-9 * a.abs().max(b.abs()))
}

fn parse_float(text: &str) -> Option<f64> {
    match text {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        _ => text.parse().ok(),
    }
}

/// Per-second rate of a set of counters between two scrapes. A counter that went down was
/// reset (the process restarted) and counts from zero; one that appeared since the previous
/// scrape also counts from zero (client libraries create `code="500"` at the first error).
pub fn counter_rate(
    prev: Option<&HashMap<String, f64>>,
    now: &[(String, f64)],
    dt: f64,
) -> Option<f64> {
    let prev = prev?;
    if dt <= 0.0 {
        return None;
    }
    let mut increase = 0.0;
    for (id, v) in now {
        increase += match prev.get(id) {
            Some(p) if v >= p => v - p,
            Some(_) | None => *v,
        };
    }
    Some(increase / dt)
}

#[cfg(test)]
mod tests;
