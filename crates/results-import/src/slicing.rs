//! Why an imported run's slice is not always one second: a record has one interval per slice
//! of the run, empty or not, so a file of a few requests spread over hours (10 samples 50
//! minutes apart) wrote 27,000 empty one-second intervals (16 MB, and 100 such samples 208 MB
//! and 266 MB of memory). The slice is sized to the data instead, chosen before the first
//! interval is written, and the empty time written after that choice is bounded by the time
//! that holds requests. Intervals are merged whole (HDR histograms add exactly): no
//! percentile is averaged.

use loadlab_metrics::IntervalDelta;

/// The slice lengths an imported run may have, in seconds: whole seconds first, as a native
/// run's, then lengths a reader knows from other tools' reports.
const LADDER_S: [i64; 13] = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];

/// Slices holding something the builder keeps before choosing, when they are not dense:
/// enough to tell a sparse file's pattern, few enough for memory (one request each, mostly).
pub const DECIDE_AFTER: usize = 64;

/// Seconds a dense file is held before its slice is chosen, about as many as are held anyway
/// for requests out of order (`REORDER_WINDOW`): a load test's first seconds (a
/// 2.7 MB k6 file took 157 MB instead of 34 MB when 64 busy seconds were held).
const DENSE_AFTER_S: i64 = 6;

/// Empty slices allowed per slice holding something, and at least this many in all (a
/// ten-minute run at one request a minute stays second by second).
const EMPTY_PER_BUSY: i64 = 16;
const MIN_SLICES: i64 = 600;

/// Empty slices written after the choice beyond the budget above, before the import is
/// refused (a run of one hour's pause, as two appended runs of one file have, still goes).
const EMPTY_SLACK: i64 = 3600;

/// The slice (µs) for a run of `span_us` whose requests fall in `busy` one-second slices:
/// the shortest of [`LADDER_S`] that gives no more than `EMPTY_PER_BUSY` slices per busy one
/// (at least `MIN_SLICES`).
pub fn slice_for(span_us: i64, busy: usize) -> i64 {
    let allowed = (EMPTY_PER_BUSY * busy as i64).max(MIN_SLICES);
    let slice_s = LADDER_S
        .into_iter()
        .find(|&s| (span_us + s * 1_000_000 - 1) / (s * 1_000_000) <= allowed)
        .unwrap_or(LADDER_S[LADDER_S.len() - 1]);
    slice_s * 1_000_000
}

/// Whether `busy` one-second slices holding something over `span_s` seconds are enough to
/// choose the slice: many of them, or dense ones (one second in `EMPTY_PER_BUSY` or more)
/// over `DENSE_AFTER_S`, which stay one second long.
pub fn ready(span_s: i64, busy: usize) -> bool {
    busy >= DECIDE_AFTER || (span_s > DENSE_AFTER_S && busy as i64 * EMPTY_PER_BUSY >= span_s)
}

/// Whether `empty` slices written against `busy` ones holding something are too many.
pub fn over_budget(empty: i64, busy: i64) -> bool {
    empty > EMPTY_SLACK + EMPTY_PER_BUSY * busy
}

/// `later`'s interval merged into `into` (the same slice once slices are longer): counts and
/// histograms add; the VUs active are the later's, the peak the larger.
pub fn merge_later(into: &mut IntervalDelta, later: &IntervalDelta) {
    let (active, active_max) = (into.active, into.active_max);
    into.add(later);
    into.active = if later.active_max > 0 {
        later.active
    } else {
        active
    };
    into.active_max = active_max.max(later.active_max);
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000;

    #[test]
    fn the_slice_fits_the_data() {
        // (what, span, busy one-second slices, slice in s)
        let cases = [
            ("a load test: 64 busy seconds in a row", 64 * S, 64, 1),
            ("a request every 10 s", 640 * S, 64, 1),
            ("ten minutes, a request a minute", 600 * S, 10, 1),
            ("10 samples 50 min apart", 27_000 * S, 10, 60),
            ("100 samples 59 min apart, 64 read", 63 * 3540 * S, 64, 300),
            ("an hour, a request a minute", 3600 * S, 60, 5),
            ("weeks", 100 * 86_400 * S, 1, 3600),
        ];
        for (what, span, busy, want) in cases {
            assert_eq!(slice_for(span, busy) / S, want, "{what}");
        }
    }

    #[test]
    fn dense_seconds_are_decided_at_once_sparse_ones_held() {
        // (span s, busy, ready)
        let cases = [
            (5, 5, false),
            (7, 7, true),
            (160, 10, true),
            (161, 10, false),
            (100_000, 63, false),
            (100_000, 64, true),
        ];
        for (span, busy, want) in cases {
            assert_eq!(ready(span, busy), want, "{busy} in {span} s");
        }
    }

    #[test]
    fn the_empty_budget_grows_with_the_busy_slices() {
        let cases = [
            (3600, 0, false),
            (3601, 0, true),
            (3000 * 2, 64, true),
            (3000, 60, false),
            (3600 + 16 * 1000, 1000, false),
        ];
        for (empty, busy, over) in cases {
            assert_eq!(over_budget(empty, busy), over, "{empty} empty, {busy} busy");
        }
    }

    #[test]
    fn merged_intervals_keep_the_later_vus_and_the_peak() {
        let mut a = IntervalDelta {
            active: 5,
            active_max: 9,
            iterations_completed: 2,
            ..IntervalDelta::default()
        };
        let b = IntervalDelta {
            active: 3,
            active_max: 4,
            iterations_completed: 1,
            ..IntervalDelta::default()
        };
        merge_later(&mut a, &b);
        assert_eq!((a.active, a.active_max, a.iterations_completed), (3, 9, 3));
        merge_later(&mut a, &IntervalDelta::default());
        assert_eq!((a.active, a.active_max), (3, 9));
    }
}
