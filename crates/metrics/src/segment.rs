//! A share of a plan (`--segment i/N`, and each worker thread's part of it): the arithmetic
//! that makes shares of VUs, arrivals and bursts add up exactly to the whole. One type for
//! the plan's arithmetic, the run record's segment and the distributed run's layout.

use serde::{Deserialize, Serialize};

/// A share of the plan: part `index` of `count` equal parts (worker threads, or machines),
/// 0-based. Written `i/N`, as `--segment` takes it and records keep it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash, PartialOrd, Ord)]
pub struct Segment {
    pub index: u32,
    pub count: u32,
}

impl Segment {
    pub const WHOLE: Segment = Segment { index: 0, count: 1 };

    /// Parses `i/N` (0 ≤ i < N), as `--segment` takes it.
    pub fn parse(text: &str) -> Result<Segment, String> {
        let bad = || {
            format!("invalid segment `{text}`: expected i/N with 0 ≤ i < N, e.g. 0/4 (the first of four)")
        };
        let (i, n) = text.trim().split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        if count > 100_000 {
            return Err(format!("invalid segment `{text}`: at most 100000 segments"));
        }
        Ok(Segment { index, count })
    }

    /// Part `index` of this segment split into `parts` more (worker threads of a process
    /// running a segment): arrival k belongs to it when k ≡ self.index (mod self.count) and
    /// k div self.count ≡ index (mod parts), so shares still add up exactly.
    pub fn split(self, index: u32, parts: u32) -> Segment {
        Segment {
            index: self.index + self.count * index,
            count: self.count * parts,
        }
    }

    /// This segment's fraction of the plan (for rates, which split evenly).
    pub fn fraction(self) -> f64 {
        1.0 / f64::from(self.count)
    }

    /// This segment's exact share of `total` items (shares sum to `total`).
    pub fn share(self, total: u64) -> u64 {
        let (base, extra) = (total / self.count as u64, total % self.count as u64);
        base + u64::from((self.index as u64) < extra)
    }

    /// True if global item `n` belongs to this segment.
    pub fn owns(self, n: u64) -> bool {
        n % self.count as u64 == self.index as u64
    }
}

impl std::fmt::Display for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_parse() {
        assert_eq!(Segment::parse("2/4"), Ok(Segment { index: 2, count: 4 }));
        for bad in ["4/4", "1/0", "a/2", "1", "-1/2", ""] {
            assert!(Segment::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shares_sum_exactly() {
        for total in [0u64, 1, 7, 66_666] {
            let sum: u64 = (0..7)
                .map(|i| Segment { index: i, count: 7 }.share(total))
                .sum();
            assert_eq!(sum, total);
        }
    }
}
