//! A steered run's stretches of constant load, each with what was measured wholly inside it.
//! The commands are known only when the run ends, so a run that may be steered keeps each
//! interval's latency histogram (compressed, a few hundred bytes) until then.

use super::Summarizer;
use crate::meta::{RecordEnd, RecordMeta};
use loadlab_metrics::result::LoadStretch;
use loadlab_metrics::result::{decode_histogram, encode_nonempty, IntervalLatency, PlannedLoad};
use loadlab_metrics::steering::{driven_points, stretches_of, StretchLevel};
use loadlab_metrics::LazyHistogram;

/// Interval bounds and stretch bounds are the same instants, computed apart.
const EPS: f64 = 1e-6;

impl Summarizer {
    /// Keeps an interval's latency for the stretches (only for a run that may be steered).
    pub(super) fn keep_interval_latency(&mut self, latency: &LazyHistogram) {
        if self.keeps_interval_latency {
            self.interval_latency
                .push(latency.get().map(encode_nonempty).unwrap_or_default());
        }
    }

    /// The load as driven and its stretches; `None` for a run no command steered.
    pub(super) fn steered(
        &self,
        meta: &RecordMeta,
        end: Option<&RecordEnd>,
    ) -> Option<(PlannedLoad, Vec<LoadStretch>)> {
        let end = end?;
        if end.steering.is_empty() && end.driven.is_none() {
            return None;
        }
        let planned = meta.load.planned.as_ref();
        let points = match &end.driven {
            Some(summed) => summed.points.clone(),
            None => driven_points(
                planned.map_or(&[][..], |p| &p.points),
                &end.steering,
                self.wall_s,
            ),
        };
        let stretches = stretches_of(&points)
            .into_iter()
            .map(|(from_s, to_s, level)| self.measure(from_s, to_s, level))
            .collect();
        let vus = planned.map_or(meta.load.model == loadlab_metrics::LoadModel::Closed, |p| {
            p.vus
        });
        Some((PlannedLoad { vus, points }, stretches))
    }

    /// What the measured intervals wholly inside `from_s..to_s` hold.
    fn measure(&self, from_s: f64, to_s: f64, level: StretchLevel) -> LoadStretch {
        let mut latency = LazyHistogram::new();
        let (mut measured_s, mut requests, mut failed) = (0.0, 0, 0);
        let first = self.intervals.partition_point(|i| i.t < from_s - EPS);
        for (i, interval) in self.intervals.iter().enumerate().skip(first) {
            if interval.t + interval.length_s > to_s + EPS {
                break;
            }
            if interval.warmup {
                continue;
            }
            measured_s += interval.length_s;
            requests += interval.requests;
            failed += interval.failed;
            let kept = self.interval_latency.get(i).filter(|t| !t.is_empty());
            if let Some(h) = kept.and_then(|t| decode_histogram(t)) {
                latency.add_histogram(&h);
            }
        }
        LoadStretch {
            from_s,
            to_s,
            level,
            measured_s,
            requests,
            failed,
            rate: if measured_s > 0.0 {
                requests as f64 / measured_s
            } else {
                0.0
            },
            latency_ms: IntervalLatency::of(latency.get()),
        }
    }
}
