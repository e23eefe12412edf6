//! Clock skew between the segments of a distributed run. Segments on different machines start
//! at one wall-clock time, each read by its own clock, so their starts are only as aligned as
//! their clocks. Each segment estimates its clock's offset against one reference every segment
//! can see (the object store's timestamps) as an interval; the offsets' differences are the
//! skew between segments (the reference's own error cancels out), with their uncertainty.

use serde::{Deserialize, Serialize};

/// One segment's clock against the reference: `offset_ms` = own clock − reference clock, the
/// true offset lying within `offset_ms ± uncertainty_ms` (under the assumptions in `method`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClockEstimate {
    pub offset_ms: f64,
    pub uncertainty_ms: f64,
    /// What the offset is measured against, e.g. `object store Last-Modified (1 s resolution)`.
    pub reference: String,
    /// Probes the estimate was made from.
    pub probes: u32,
    /// How long this segment waited at the start barrier, in seconds.
    #[serde(default)]
    pub barrier_wait_s: f64,
}

/// The skew between the segments of a merged run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClockSkew {
    /// Largest clock difference between two segments (their offsets' spread), in ms.
    pub spread_ms: f64,
    /// The spread's uncertainty (the two segments' uncertainties added), in ms.
    pub uncertainty_ms: f64,
    /// Segments whose clock was estimated (of all merged).
    pub estimated: u32,
    pub reference: String,
}

impl ClockSkew {
    /// The skew from the segments' estimates (`None` when fewer than two have one).
    pub fn of<'a>(estimates: impl IntoIterator<Item = &'a ClockEstimate>) -> Option<ClockSkew> {
        let all: Vec<&ClockEstimate> = estimates.into_iter().collect();
        if all.len() < 2 {
            return None;
        }
        let by_offset =
            |a: &&&ClockEstimate, b: &&&ClockEstimate| a.offset_ms.total_cmp(&b.offset_ms);
        let high = all.iter().max_by(by_offset)?;
        let low = all.iter().min_by(by_offset)?;
        Some(ClockSkew {
            spread_ms: high.offset_ms - low.offset_ms,
            uncertainty_ms: high.uncertainty_ms + low.uncertainty_ms,
            estimated: all.len() as u32,
            reference: high.reference.clone(),
        })
    }

    /// The skew in words, for reports.
    pub fn describe(&self) -> String {
        format!(
            "clock skew between segments: {:.0} ms ± {:.0} ms ({} segments against the {}); the segments started together by their own clocks, so their starts were about this far apart",
            self.spread_ms, self.uncertainty_ms, self.estimated, self.reference
        )
    }
}

/// One probe: the client's clock just before sending a write (`sent`) and just after its
/// answer (`answered`), and the reference's timestamp of that write, truncated to `resolution`
/// (all in seconds). The write happened between `sent` and `answered`; the reference stamped
/// it with a time in `[stamp, stamp + resolution)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    pub sent: f64,
    pub answered: f64,
    pub stamp: f64,
    pub resolution: f64,
}

impl Probe {
    /// The offsets (own − reference, seconds) this probe allows: `[lo, hi]`.
    fn bounds(&self) -> (f64, f64) {
        (
            self.sent - (self.stamp + self.resolution),
            self.answered - self.stamp,
        )
    }
}

/// Intersects the probes' bounds (each narrows the interval; probes at different sub-second
/// phases make a coarse reference clock precise). Probes that contradict the others (a
/// reference that rounds instead of truncating, a clock step) widen it back to their union.
pub fn estimate(probes: &[Probe], reference: &str) -> Option<ClockEstimate> {
    let (mut lo, mut hi) = probes.first()?.bounds();
    for p in &probes[1..] {
        let (a, b) = p.bounds();
        lo = lo.max(a);
        hi = hi.min(b);
    }
    if lo > hi {
        lo = probes
            .iter()
            .map(|p| p.bounds().0)
            .fold(f64::INFINITY, f64::min);
        hi = probes
            .iter()
            .map(|p| p.bounds().1)
            .fold(f64::NEG_INFINITY, f64::max);
    }
    Some(ClockEstimate {
        offset_ms: (lo + hi) / 2.0 * 1000.0,
        uncertainty_ms: (hi - lo) / 2.0 * 1000.0,
        reference: reference.to_string(),
        probes: probes.len() as u32,
        barrier_wait_s: 0.0,
    })
}

/// The resolution of a reference clock, judged from its timestamps: 1 s when none has a
/// fraction (HTTP dates, S3), else 10 ms (file systems stamp with the kernel's coarse clock,
/// which ticks every 1–10 ms).
pub fn resolution_of(stamps: &[f64]) -> f64 {
    if stamps.iter().all(|s| s.fract() == 0.0) {
        1.0
    } else {
        0.01
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(sent: f64, answered: f64, stamp: f64, resolution: f64) -> Probe {
        Probe {
            sent,
            answered,
            stamp,
            resolution,
        }
    }

    #[test]
    fn probes_bound_the_offset() {
        // (probes, expected offset ms, expected uncertainty ms)
        let cases: Vec<(Vec<Probe>, f64, f64)> = vec![
            // A precise reference, 10 ms round trip, clocks equal: 0 ± 5 ms (+ 0.5 ms stamp).
            (vec![probe(100.000, 100.010, 100.005, 0.001)], -0.5, 5.5),
            // Own clock 2 s ahead.
            (vec![probe(102.000, 102.010, 100.005, 0.001)], 1999.5, 5.5),
            // A 1 s reference: one probe leaves a second of doubt...
            (vec![probe(100.300, 100.310, 100.0, 1.0)], -195.0, 505.0),
            // ...probes at several phases narrow it: the stamp turns 101 between own 100.61 and
            // 100.70, so the own clock is 0.29–0.40 s behind.
            (
                vec![
                    probe(100.300, 100.310, 100.0, 1.0),
                    probe(100.600, 100.610, 100.0, 1.0),
                    probe(100.700, 100.710, 101.0, 1.0),
                ],
                -345.0,
                55.0,
            ),
        ];
        for (probes, offset, uncertainty) in cases {
            let e = estimate(&probes, "test").unwrap();
            assert!(
                (e.offset_ms - offset).abs() < 1e-6
                    && (e.uncertainty_ms - uncertainty).abs() < 1e-6,
                "{probes:?}: {e:?}"
            );
        }
        assert!(estimate(&[], "test").is_none());
    }

    #[test]
    fn contradicting_probes_widen_to_their_union() {
        let e = estimate(
            &[
                probe(100.0, 100.01, 100.0, 0.001),
                probe(200.0, 200.01, 195.0, 0.001),
            ],
            "test",
        )
        .unwrap();
        assert!(e.uncertainty_ms > 2000.0, "{e:?}");
    }

    #[test]
    fn skew_is_the_spread_of_offsets() {
        let at = |offset_ms: f64, uncertainty_ms: f64| ClockEstimate {
            offset_ms,
            uncertainty_ms,
            reference: "store".into(),
            probes: 3,
            barrier_wait_s: 0.0,
        };
        let estimates = [at(12.0, 3.0), at(-8.0, 5.0), at(1.0, 40.0)];
        let skew = ClockSkew::of(&estimates).unwrap();
        assert_eq!(
            (skew.spread_ms, skew.uncertainty_ms, skew.estimated),
            (20.0, 8.0, 3)
        );
        assert!(ClockSkew::of(&estimates[..1]).is_none());
        assert_eq!(resolution_of(&[10.0, 11.0]), 1.0);
        assert_eq!(resolution_of(&[10.0, 11.25]), 0.01);
    }
}
