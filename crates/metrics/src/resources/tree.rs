//! `resources` of the run JSON: every series summarised over the steady window as a tree
//! (`resources.host.cpu_percent.mean`, `resources.processes.target.rss_bytes.max`), the
//! samples per interval, what the monitor found and could not read.

use super::sample::{MonitorWarning, ProcessCpu, Sample};
use super::summary::{series_path, summarize, SeriesSummary};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Series of one source, by the rest of their name: `cpu_percent`, `cpu.user_percent` as
/// `{cpu: {user_percent: …}}`, `core.0.cpu_percent` as `{core: {"0": {cpu_percent: …}}}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ResourceTree(pub BTreeMap<String, ResourceEntry>);

/// A series' summary, or a group of further names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceEntry {
    Series(SeriesSummary),
    Group(ResourceTree),
}

impl ResourceTree {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn insert(&mut self, path: &[&str], summary: SeriesSummary) {
        let Some((first, rest)) = path.split_first() else {
            return;
        };
        if rest.is_empty() {
            self.0
                .entry(first.to_string())
                .or_insert(ResourceEntry::Series(summary));
            return;
        }
        let entry = self
            .0
            .entry(first.to_string())
            .or_insert_with(|| ResourceEntry::Group(ResourceTree::default()));
        if let ResourceEntry::Group(tree) = entry {
            tree.insert(rest, summary);
        }
    }

    fn get(&self, path: &[&str]) -> Option<&SeriesSummary> {
        let (first, rest) = path.split_first()?;
        match (self.0.get(*first)?, rest.is_empty()) {
            (ResourceEntry::Series(s), true) => Some(s),
            (ResourceEntry::Group(t), false) => t.get(rest),
            _ => None,
        }
    }

    /// Every series below this tree as `(name relative to it, summary)`, in name order.
    pub fn flatten(&self) -> Vec<(String, SeriesSummary)> {
        let mut out = Vec::new();
        for (k, v) in &self.0 {
            match v {
                ResourceEntry::Series(s) => out.push((k.clone(), *s)),
                ResourceEntry::Group(t) => out.extend(
                    t.flatten()
                        .into_iter()
                        .map(|(n, s)| (format!("{k}.{n}"), s)),
                ),
            }
        }
        out
    }
}

/// How bad a finding is for the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    HostContended,
    TargetCpuBound,
    MemoryGrowth,
    FdPressure,
    PortsPressure,
}

/// One thing the samples showed, in words (the typed consequences are in `validity` and
/// `verdicts`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceFinding {
    pub kind: FindingKind,
    pub message: String,
}

/// The samples of one interval, as the run JSON lists them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceInterval {
    /// End of the sample, seconds since the run's start (warm-up included).
    pub t: f64,
    pub length_s: f64,
    pub warmup: bool,
    /// Every series but the per-core ones (`host.core.*`, kept in the record), by full name.
    pub values: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top_processes: Vec<ProcessCpu>,
}

/// `resources` of a run: what the monitor sampled, summarised over the steady window.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Resources {
    /// The segment that took these samples (in a merged run's `segments`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<u32>,
    /// Typical length of a sample, in seconds.
    pub interval_s: f64,
    /// Samples in the steady window (warm-up excluded), which the summaries are over.
    pub samples: u32,
    #[serde(default, skip_serializing_if = "ResourceTree::is_empty")]
    pub host: ResourceTree,
    #[serde(default, skip_serializing_if = "ResourceTree::is_empty")]
    pub generator: ResourceTree,
    #[serde(default, skip_serializing_if = "ResourceTree::is_empty")]
    pub processes: ResourceTree,
    #[serde(default, skip_serializing_if = "ResourceTree::is_empty")]
    pub cgroups: ResourceTree,
    #[serde(default, skip_serializing_if = "ResourceTree::is_empty")]
    pub prometheus: ResourceTree,
    /// The busiest other processes over the steady window (mean % of one core).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top_processes: Vec<ProcessCpu>,
    /// Who used the host's CPU over the steady window, and the steal on the generator's cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_load: Option<super::HostLoad>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<ResourceFinding>,
    /// Sources that could not be read, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<MonitorWarning>,
    /// CPU of the monitor's own threads, % of one core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor_cpu_percent: Option<f64>,
    #[serde(default)]
    pub intervals: Vec<ResourceInterval>,
    /// A merged run: each segment's resources (their hosts differ, so they are not added).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub segments: Vec<Resources>,
}

impl Resources {
    /// Summarises `steady` (the samples after warm-up) and lists `all` per interval.
    pub fn of(steady: &[Sample], all: &[(bool, &Sample)]) -> Resources {
        let mut r = Resources {
            samples: steady.len() as u32,
            ..Resources::default()
        };
        let lengths: Vec<u64> = all.iter().map(|(_, s)| s.interval_ms).collect();
        r.interval_s = median(&lengths) as f64 / 1000.0;
        for (name, summary) in summarize(steady) {
            let path = series_path(&name);
            let Some((source, rest)) = path.split_first() else {
                continue;
            };
            if let Some(tree) = r.tree_mut(source) {
                tree.insert(rest, summary);
            }
        }
        r.top_processes = mean_top_processes(steady.iter());
        for (warmup, s) in all {
            r.warnings.extend(s.warnings.iter().cloned());
            r.intervals.push(ResourceInterval {
                t: s.elapsed_ms as f64 / 1000.0,
                length_s: s.interval_ms as f64 / 1000.0,
                warmup: *warmup,
                values: s
                    .values
                    .iter()
                    .filter(|(k, _)| !k.starts_with("host.core."))
                    .map(|(k, v)| (k.clone(), *v))
                    .collect(),
                top_processes: s.top_processes.clone(),
            });
        }
        r
    }

    fn tree_mut(&mut self, source: &str) -> Option<&mut ResourceTree> {
        Some(match source {
            "host" => &mut self.host,
            "generator" => &mut self.generator,
            "processes" => &mut self.processes,
            "cgroups" => &mut self.cgroups,
            "prometheus" => &mut self.prometheus,
            _ => return None,
        })
    }

    fn tree(&self, source: &str) -> Option<&ResourceTree> {
        Some(match source {
            "host" => &self.host,
            "generator" => &self.generator,
            "processes" => &self.processes,
            "cgroups" => &self.cgroups,
            "prometheus" => &self.prometheus,
            _ => return None,
        })
    }

    /// The summary of a series by its full name (`processes.target.cpu_percent`).
    pub fn get(&self, series: &str) -> Option<&SeriesSummary> {
        let path = series_path(series);
        let (source, rest) = path.split_first()?;
        self.tree(source)?.get(rest)
    }

    /// Every summarised series by full name, in source order.
    pub fn all_series(&self) -> Vec<(String, SeriesSummary)> {
        let mut out = Vec::new();
        for source in ["host", "generator", "processes", "cgroups", "prometheus"] {
            if let Some(tree) = self.tree(source) {
                out.extend(
                    tree.flatten()
                        .into_iter()
                        .map(|(n, s)| (format!("{source}.{n}"), s)),
                );
            }
        }
        out
    }

    /// Nothing was sampled.
    pub fn is_empty(&self) -> bool {
        self.intervals.is_empty() && self.segments.is_empty()
    }
}

fn median(values: &[u64]) -> u64 {
    let mut v = values.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// Mean CPU of each other process over the samples (absent in a sample counts as idle),
/// busiest first.
pub(super) fn mean_top_processes<'a>(
    samples: impl ExactSizeIterator<Item = &'a Sample>,
) -> Vec<ProcessCpu> {
    let n = samples.len().max(1) as f64;
    let mut by_name: BTreeMap<&str, (f64, u32)> = BTreeMap::new();
    for s in samples {
        for p in &s.top_processes {
            let e = by_name.entry(p.name.as_str()).or_default();
            e.0 += p.cpu_percent;
            e.1 = e.1.max(p.processes);
        }
    }
    let mut out: Vec<ProcessCpu> = by_name
        .into_iter()
        .map(|(name, (sum, processes))| ProcessCpu {
            name: name.to_string(),
            processes,
            cpu_percent: sum / n,
        })
        .collect();
    // A process that used less than 1% of a core on average did not compete: naming it
    // beside a compiler at 97% ("kdamond.0 0% of a core") is noise.
    out.retain(|p| p.cpu_percent >= MIN_NAMED_CPU_PERCENT);
    out.sort_by(|a, b| b.cpu_percent.total_cmp(&a.cpu_percent));
    out.truncate(super::TOP_PROCESSES);
    out
}

/// Others below this share of a core (mean over the samples) are not named.
const MIN_NAMED_CPU_PERCENT: f64 = 0.5;

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(end_ms: u64, values: &[(&str, f64)]) -> Sample {
        Sample {
            elapsed_ms: end_ms,
            unix_ms: 0,
            interval_ms: 1000,
            values: values.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            top_processes: Vec::new(),
            missing: Vec::new(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn series_become_a_tree_and_back() {
        let s = vec![
            sample(
                1000,
                &[
                    ("host.cpu_percent", 50.0),
                    ("host.cpu.user_percent", 30.0),
                    ("host.core.0.cpu_percent", 70.0),
                    ("processes.target.cpu_percent", 90.0),
                    (r#"prometheus.app.x_bucket{le="0.5"}"#, 3.0),
                ],
            ),
            sample(
                2000,
                &[
                    ("host.cpu_percent", 70.0),
                    ("processes.target.cpu_percent", 110.0),
                ],
            ),
        ];
        let all: Vec<(bool, &Sample)> = s.iter().map(|x| (false, x)).collect();
        let r = Resources::of(&s, &all);
        assert_eq!(r.get("host.cpu_percent").unwrap().mean, 60.0);
        assert_eq!(r.get("processes.target.cpu_percent").unwrap().max, 110.0);
        assert_eq!(r.get("host.core.0.cpu_percent").unwrap().samples, 1);
        assert!(r.get(r#"prometheus.app.x_bucket{le="0.5"}"#).is_some());
        assert!(r.get("host.cpu").is_none(), "a group is not a series");
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["host"]["cpu"]["user_percent"]["mean"], 30.0);
        assert_eq!(json["processes"]["target"]["cpu_percent"]["max"], 110.0);
        assert!(
            !json["intervals"][0]["values"]
                .as_object()
                .unwrap()
                .contains_key("host.core.0.cpu_percent"),
            "per-core series stay in the record"
        );
        let back: Resources = serde_json::from_value(json).unwrap();
        assert_eq!(back, r);
        assert_eq!(r.all_series().len(), 5);
        assert_eq!(r.interval_s, 1.0);
    }
}
