//! What an imported run's header says of its load and its plan, from what the file showed
//! while it was read (VUs over time, the rate requests were started at): kept apart from the
//! builder, which slices and writes the requests.

use loadlab_metrics::result::{LoadInfo, PlannedLoad};
use loadlab_metrics::{ImportedFrom, LoadModel};

/// The load as far as a file shows it, gathered while reading.
#[derive(Debug, Clone, Default)]
pub struct LoadSeen {
    pub model: LoadModel,
    /// (µs since the epoch, VUs or threads active) as the file reported them.
    pub vus: Vec<(i64, u64)>,
    /// Requests, and the first and last time one was started (the open model's rate).
    pub requests: u64,
    pub first_start_us: i64,
    pub last_start_us: i64,
}

/// The load the file shows: VUs over time when it reports them (closed model), else the
/// rate the requests were started at (open model).
pub(crate) fn load_info(seen: &LoadSeen, start_s: f64, measured_s: f64) -> LoadInfo {
    let mut load = LoadInfo {
        model: seen.model,
        planned_duration_s: measured_s,
        ..LoadInfo::default()
    };
    if !seen.vus.is_empty() {
        load.max_vus = seen.vus.iter().map(|&(_, v)| v as u32).max();
        load.planned = Some(PlannedLoad {
            vus: true,
            points: seen
                .vus
                .iter()
                .map(|&(t, v)| ((t as f64 / 1e6 - start_s).max(0.0), v as f64))
                .collect(),
        });
    } else if seen.model == LoadModel::Open && seen.requests > 1 {
        let span_s = (seen.last_start_us - seen.first_start_us) as f64 / 1e6;
        if span_s > 0.0 {
            let rate = (seen.requests - 1) as f64 / span_s;
            load.peak_rate = Some(rate);
            load.planned_arrivals = Some(seen.requests as f64);
            load.planned = Some(PlannedLoad {
                vus: false,
                points: vec![(0.0, rate), (measured_s, rate)],
            });
        }
    }
    load
}

/// Imported runs of one name from one tool measured "the same plan" as far as loadlab can
/// tell: they share a fingerprint, so history and studies group them.
pub(crate) fn plan_hash(name: &str, source: &ImportedFrom) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (name, &source.tool, &source.format).hash(&mut h);
    format!("imported-{:016x}", h.finish())
}
