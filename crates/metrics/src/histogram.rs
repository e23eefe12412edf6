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
