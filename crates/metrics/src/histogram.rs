//! The one histogram shape every latency series uses: 1 µs .. 1 h, 3 significant digits.

use hdrhistogram::Histogram;

pub type LatencyHistogram = Histogram<u64>;

/// One hour in microseconds: the largest value tracked exactly; larger ones are clamped.
pub const MAX_TRACKABLE_US: u64 = 3_600_000_000;

pub fn new_histogram() -> LatencyHistogram {
    Histogram::new_with_bounds(1, MAX_TRACKABLE_US, 3).expect("static histogram bounds are valid")
}

/// Records a value in µs, clamping it into the tracked range so recording never fails.
#[inline]
pub fn record_us(h: &mut LatencyHistogram, us: u64) {
    h.saturating_record(us.clamp(1, MAX_TRACKABLE_US));
}

/// A histogram that allocates on its first value: most scopes of most intervals record
/// nothing in most series (lag, server latency), and a full histogram is ~190 KB.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LazyHistogram(Option<LatencyHistogram>);

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
        self.0
            .get_or_insert_with(new_histogram)
            .add(h)
            .expect("every latency histogram has the same bounds");
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
        if let Some(h) = self.0.as_mut() {
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
