//! The one histogram shape every latency series uses: 1 µs .. 1 h, 3 significant digits.

use hdrhistogram::Histogram;

pub type LatencyHistogram = Histogram<u64>;

/// One hour in microseconds: the largest value tracked exactly; larger ones are clamped.
pub const MAX_TRACKABLE_US: u64 = 3_600_000_000;

pub fn new_histogram() -> LatencyHistogram {
    Histogram::new_with_bounds(1, MAX_TRACKABLE_US, 3).expect("static histogram bounds are valid")
}

/// A duration in the µs every histogram holds (saturating: no duration is out of range).
#[inline]
pub fn micros(d: std::time::Duration) -> u64 {
    d.as_micros().min(u128::from(u64::MAX)) as u64
}

/// Records a value in µs, clamping it into the tracked range so recording never fails.
#[inline]
pub fn record_us(h: &mut LatencyHistogram, us: u64) {
    h.saturating_record(us.clamp(1, MAX_TRACKABLE_US));
}

/// Histograms of at most this many values are added value by value. `Histogram::add` walks
/// all ~23,000 buckets (25 µs) however few values the histogram holds, and the coordinator
/// adds every step's histograms of each interval several times (sums, summary, windows):
/// with 51 steps and 100 ms intervals that was a fifth of a generator's CPU. Measured on
/// this VM: 50 values 3.5 µs by value, 1,000 values 14.5 µs; 20,000 values 47 µs (so `add`).
const SPARSE: u64 = 1_000;

/// A histogram that allocates on its first value: most scopes of most intervals record
/// nothing in most series (lag, server latency), and a full histogram is ~190 KB.
#[derive(Debug, Clone, Default)]
pub struct LazyHistogram(Option<LatencyHistogram>);

/// Equal when they hold the same values: one made but empty ([`LazyHistogram::reserve`]) is
/// the same measurement as one never made.
impl PartialEq for LazyHistogram {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl LazyHistogram {
    pub fn new() -> Self {
        Self(None)
    }

    #[inline]
    pub fn record(&mut self, us: u64) {
        record_us(self.0.get_or_insert_with(new_histogram), us);
    }

    /// Adds every value of `other` (exact).
    pub fn add(&mut self, other: &LazyHistogram) {
        if let Some(h) = other.get() {
            self.add_histogram(h);
        }
    }

    pub fn add_histogram(&mut self, h: &LatencyHistogram) {
        if h.is_empty() {
            return;
        }
        let into = self.0.get_or_insert_with(new_histogram);
        if h.len() <= SPARSE {
            // Value by value, each into its own bucket: exact, as `add` is.
            for v in h.iter_recorded() {
                into.saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        } else {
            into.add(h)
                .expect("every latency histogram has the same bounds");
        }
    }

    /// Takes away every value of `other` (exact), which must all be in it: a running window
    /// drops its oldest interval this way instead of merging the others again.
    pub fn subtract(
        &mut self,
        other: &LazyHistogram,
    ) -> Result<(), hdrhistogram::errors::SubtractionError> {
        match (self.0.as_mut(), other.get()) {
            (_, None) => Ok(()),
            (Some(h), Some(o)) => h.subtract(o),
            (None, Some(_)) => {
                Err(hdrhistogram::errors::SubtractionError::SubtrahendCountExceedsMinuendCount)
            }
        }
    }

    /// Makes its histogram now, empty: making one writes all its ~190 KB (hdrhistogram zeroes
    /// its counts), which a worker doing it at its first value pays on the clock (1.2 ms of
    /// page faults at a run's first interval, measured, in a run at 1,000/s).
    pub fn reserve(&mut self) {
        self.0.get_or_insert_with(new_histogram);
    }

    /// Whether its histogram is made (values or not).
    pub fn is_reserved(&self) -> bool {
        self.0.is_some()
    }

    /// The histogram, when it holds at least one value.
    pub fn get(&self) -> Option<&LatencyHistogram> {
        self.0.as_ref().filter(|h| !h.is_empty())
    }

    pub fn is_empty(&self) -> bool {
        self.get().is_none()
    }

    pub fn len(&self) -> u64 {
        self.get().map_or(0, |h| h.len())
    }

    /// Empties it, keeping its memory for the next interval.
    pub fn clear(&mut self) {
        // Zeroing is a ~190 KB memset: skipped when nothing was recorded since the last one.
        if let Some(h) = self.0.as_mut().filter(|h| !h.is_empty()) {
            h.reset();
        }
    }

    /// A copy as a full histogram (empty when nothing was recorded).
    pub fn to_histogram(&self) -> LatencyHistogram {
        self.get().cloned().unwrap_or_else(new_histogram)
    }
}

impl From<LatencyHistogram> for LazyHistogram {
    fn from(h: LatencyHistogram) -> Self {
        Self(Some(h))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adding value by value (sparse) and bucket by bucket (`Histogram::add`) give the same
    /// histogram: counts, every percentile, min and max, for shapes either side of `SPARSE`.
    #[test]
    fn sparse_and_dense_additions_agree() {
        let shapes: [(&str, Vec<u64>); 5] = [
            ("one value", vec![417]),
            (
                "a few, one at the top of the range",
                vec![3, 90, 2_047, MAX_TRACKABLE_US],
            ),
            ("repeats in one bucket", vec![1_000_001; 7]),
            (
                "just sparse",
                (1..=SPARSE).map(|i| i * 37 % 9_000 + 50).collect(),
            ),
            (
                "dense",
                (1..=5 * SPARSE)
                    .map(|i| i * 7_919 % 2_000_000 + 1)
                    .collect(),
            ),
        ];
        for (name, values) in shapes {
            let mut from = new_histogram();
            for v in &values {
                record_us(&mut from, *v);
            }
            let mut before = LazyHistogram::new();
            before.record(5);
            before.record(250_000);
            let mut exact = before.to_histogram();
            exact.add(&from).unwrap();
            before.add_histogram(&from);
            let got = before.get().unwrap();
            assert_eq!(got.len(), exact.len(), "{name}");
            assert_eq!((got.min(), got.max()), (exact.min(), exact.max()), "{name}");
            for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
                assert_eq!(
                    got.value_at_quantile(q),
                    exact.value_at_quantile(q),
                    "{name} q{q}"
                );
            }
            assert!(
                got.iter_all()
                    .zip(exact.iter_all())
                    .all(|(a, b)| { a.count_at_value() == b.count_at_value() }),
                "{name}: bucket counts differ"
            );
        }
    }
}
