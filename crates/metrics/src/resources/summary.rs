//! Pure summaries of samples: the steady window of a run, and mean/min/max/last per series
//! (means weighted by interval length, so a short final interval counts for what it is).

use super::sample::Sample;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// One series over a window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SeriesSummary {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    pub last: f64,
    /// Samples that had a value.
    pub samples: u32,
}

/// The samples whose whole interval lies in `[from, to]` (times since the monitor started):
/// e.g. the run without its warm-up.
pub fn window(samples: &[Sample], from: Duration, to: Duration) -> Vec<Sample> {
    samples
        .iter()
        .filter(|s| {
            let end = s.elapsed_ms;
            let start = end.saturating_sub(s.interval_ms);
            start as u128 >= from.as_millis().saturating_sub(50)
                && end as u128 <= to.as_millis() + 50
        })
        .cloned()
        .collect()
}

/// Mean, min, max and last value of every series present in `samples`.
pub fn summarize(samples: &[Sample]) -> BTreeMap<String, SeriesSummary> {
    let mut acc: BTreeMap<&str, (f64, f64, SeriesSummary)> = BTreeMap::new();
    for s in samples {
        let weight = s.interval_ms.max(1) as f64;
        for (name, &v) in &s.values {
            let e = acc.entry(name.as_str()).or_insert((
                0.0,
                0.0,
                SeriesSummary {
                    mean: 0.0,
                    min: f64::INFINITY,
                    max: f64::NEG_INFINITY,
                    last: v,
                    samples: 0,
                },
            ));
            e.0 += v * weight;
            e.1 += weight;
            e.2.min = e.2.min.min(v);
            e.2.max = e.2.max.max(v);
            e.2.last = v;
            e.2.samples += 1;
        }
    }
    acc.into_iter()
        .map(|(name, (sum, weight, mut summary))| {
            summary.mean = sum / weight;
            (name.to_string(), summary)
        })
        .collect()
}

/// The values of one series in order, with the sample they came from.
pub fn series<'a>(samples: &'a [Sample], name: &'a str) -> impl Iterator<Item = f64> + 'a {
    samples.iter().filter_map(move |s| s.get(name))
}

/// Splits a series name into its path (`host.core.0.cpu_percent` → host, core, 0,
/// cpu_percent); dots inside a Prometheus selector's braces (`{le="0.5"}`) do not split.
pub fn series_path(name: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in name.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            '.' if depth == 0 => {
                parts.push(&name[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&name[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(end_ms: u64, interval_ms: u64, values: &[(&str, f64)]) -> Sample {
        Sample {
            elapsed_ms: end_ms,
            unix_ms: 0,
            interval_ms,
            values: values.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            top_processes: Vec::new(),
            missing: Vec::new(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn weighted_means_and_extremes() {
        let samples = [
            sample(1000, 1000, &[("a", 10.0), ("b", 1.0)]),
            sample(2000, 1000, &[("a", 30.0)]),
            sample(2500, 500, &[("a", 60.0), ("b", 3.0)]),
        ];
        let s = summarize(&samples);
        // (10·1000 + 30·1000 + 60·500) / 2500
        assert!((s["a"].mean - 28.0).abs() < 1e-9);
        assert_eq!(
            (s["a"].min, s["a"].max, s["a"].last, s["a"].samples),
            (10.0, 60.0, 60.0, 3)
        );
        assert!((s["b"].mean - 5.0 / 3.0).abs() < 1e-9);
        assert_eq!(s["b"].samples, 2);
        assert!(summarize(&[]).is_empty());
    }

    #[test]
    fn windows_drop_the_warmup() {
        let samples: Vec<Sample> = (1..=5)
            .map(|i| sample(i * 1000, 1000, &[("a", i as f64)]))
            .collect();
        let w = window(&samples, Duration::from_secs(2), Duration::from_secs(4));
        assert_eq!(
            w.iter().map(|s| s.get("a").unwrap()).collect::<Vec<_>>(),
            vec![3.0, 4.0]
        );
        assert_eq!(series(&samples, "a").count(), 5);
    }

    #[test]
    fn paths_keep_selectors_whole() {
        assert_eq!(
            series_path("host.core.0.cpu_percent"),
            vec!["host", "core", "0", "cpu_percent"]
        );
        assert_eq!(
            series_path(r#"prometheus.app.svc_bucket{le="0.5"}"#),
            vec!["prometheus", "app", r#"svc_bucket{le="0.5"}"#]
        );
    }
}
