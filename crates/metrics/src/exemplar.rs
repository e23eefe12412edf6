//! Exemplars: the trace ids of the slowest requests of a step (when the scenario sends a W3C
//! `traceparent`), so a user can open exactly those requests in their tracing tool. A step
//! keeps at most [`EXEMPLARS`] per interval and per run; keeping the largest latencies, with
//! the trace id breaking ties, makes merges of workers and segments exact and deterministic.

use serde::{Deserialize, Serialize};

/// How many of the slowest requests a step keeps.
pub const EXEMPLARS: usize = 5;

/// One slow request and its trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exemplar {
    pub latency_us: u64,
    /// The W3C trace id (32 hex digits when written).
    pub trace_id: u128,
    /// Start of the interval it ended in, in ms since the plan's start (`None` until the
    /// record knows it).
    pub at_ms: Option<u64>,
}

impl Exemplar {
    /// Larger latency first; the trace id decides ties, so the order never depends on
    /// which worker saw which request first.
    fn key(&self) -> (u64, u128) {
        (self.latency_us, self.trace_id)
    }
}

/// The slowest few, largest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exemplars(Vec<Exemplar>);

impl Exemplars {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Exemplar> {
        self.0.iter()
    }

    /// Keeps `e` if it is among the slowest.
    #[inline]
    pub fn offer(&mut self, e: Exemplar) {
        if self.0.len() == EXEMPLARS && self.0[EXEMPLARS - 1].key() >= e.key() {
            return;
        }
        let at = self.0.partition_point(|x| x.key() > e.key());
        self.0.insert(at, e);
        self.0.truncate(EXEMPLARS);
    }

    pub fn add(&mut self, other: &Exemplars) {
        for e in &other.0 {
            self.offer(*e);
        }
    }

    /// Stamps the exemplars that do not know when they happened.
    pub fn at(&mut self, ms: u64) {
        for e in &mut self.0 {
            e.at_ms.get_or_insert(ms);
        }
    }
}

/// An exemplar as the run JSON and the record write it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlowRequest {
    /// 32 lowercase hex digits, as in the `traceparent` header sent.
    pub trace_id: String,
    pub latency_ms: f64,
    /// Start of the 1-second interval it ended in, seconds since the start of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_s: Option<f64>,
}

impl From<&Exemplar> for SlowRequest {
    fn from(e: &Exemplar) -> Self {
        SlowRequest {
            trace_id: format!("{:032x}", e.trace_id),
            latency_ms: e.latency_us as f64 / 1000.0,
            at_s: e.at_ms.map(|ms| ms as f64 / 1000.0),
        }
    }
}

impl SlowRequest {
    pub fn to_exemplar(&self) -> Option<Exemplar> {
        Some(Exemplar {
            latency_us: (self.latency_ms * 1000.0).round() as u64,
            trace_id: u128::from_str_radix(&self.trace_id, 16).ok()?,
            at_ms: self.at_s.map(|s| (s * 1000.0).round() as u64),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(latency_us: u64, trace_id: u128) -> Exemplar {
        Exemplar {
            latency_us,
            trace_id,
            at_ms: None,
        }
    }

    #[test]
    fn keeps_the_slowest_in_any_order() {
        let all: Vec<Exemplar> = (0..40).map(|i| e((i * 37) % 23 * 100, i as u128)).collect();
        let mut one = Exemplars::default();
        for x in &all {
            one.offer(*x);
        }
        // Two workers seeing the requests in another order, merged.
        let (mut a, mut b) = (Exemplars::default(), Exemplars::default());
        for (i, x) in all.iter().rev().enumerate() {
            if i % 3 == 0 {
                a.offer(*x)
            } else {
                b.offer(*x)
            }
        }
        a.add(&b);
        assert_eq!(a, one);
        let lat: Vec<u64> = one.iter().map(|x| x.latency_us).collect();
        assert_eq!(lat, [2200, 2100, 2100, 2000, 2000]);
        let json = SlowRequest::from(&one.0[0]);
        assert_eq!(json.trace_id.len(), 32);
        assert_eq!(json.to_exemplar(), Some(one.0[0]));
    }
}
