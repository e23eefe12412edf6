//! Every bound on what a scenario may ask for, in one place, so that any number a user can
//! write is checked when the file (or the flags) are loaded — with a message naming the limit —
//! instead of overflowing, panicking or hanging later. `docs/limits.md` lists them.
//!
//! The bounds are far above what one run needs; they exist so that arithmetic on them (stage
//! sums, arrival indices as `f64`, counters, indices stored as `u16`) cannot go wrong.

use std::time::Duration;

/// Longest duration anywhere (a run, a stage, a timeout, a think time, a warm-up): 30 days.
pub const MAX_DURATION: Duration = Duration::from_secs(30 * 24 * 3600);
/// The shortest run: below it a run holds a request or two and a rate made of its few
/// milliseconds (`--duration 1ns` reported one request as 518.7/s).
pub const MIN_DURATION: Duration = Duration::from_millis(10);
/// Most virtual users at once.
pub const MAX_VUS: u32 = 1_000_000;
/// Highest arrival rate, per second (10 ns between arrivals; no generator comes close).
pub const MAX_RATE: f64 = 1e8;
/// Most arrivals one open-model run may plan (rate × duration, summed over stages).
pub const MAX_ARRIVALS: f64 = 1e12;
/// Most iterations a VU, or all VUs together (`--requests`), may be asked to run.
pub const MAX_ITERATIONS: u64 = 1_000_000_000_000;
/// Most requests of a burst (each opens its own connection at once).
pub const MAX_BURST: u64 = 1_000_000;
/// Most iterations open at once in the open model.
pub const MAX_IN_FLIGHT: u32 = 1_000_000;
/// Most stages of a load.
pub const MAX_STAGES: usize = 10_000;
/// Highest `loop: {count}`.
pub const MAX_LOOP_COUNT: u64 = 1_000_000_000;
/// Most request steps in a scenario (the engine numbers them with 16 bits).
pub const MAX_REQUEST_STEPS: usize = 65_535;
/// Most `once:` blocks in a scenario (a VU remembers them in one 64-bit word).
pub const MAX_ONCE_BLOCKS: usize = 64;
/// Most data sets, columns of one set, and distinct capture names (16-bit indices).
pub const MAX_NAMES: usize = 65_535;
/// Deepest nesting of `[` / `{` in a scenario file (the YAML parser's cost grows with it).
pub const MAX_NESTING: usize = 64;
/// Longest header name, and longest header value written in a scenario (or with `-H`).
pub const MAX_HEADER_NAME: usize = 1024;
pub const MAX_HEADER_VALUE: usize = 64 * 1024;
/// Highest `defaults.max_body`: 1 TiB.
pub const MAX_BODY: u64 = 1 << 40;
/// Most shared connections per origin (`http.connections`), and most streams at once on one
/// of them (`http.max_streams`; HTTP/2 allows 2³¹, servers commonly 100 to 250).
pub const MAX_SHARED_CONNECTIONS: u32 = 100_000;
pub const MAX_STREAMS: u32 = 1_000_000;
/// Most source addresses.
pub const MAX_SOURCE_ADDRESSES: usize = 65_536;
/// Largest scenario file: 4 MiB, refused before it is parsed. Hand-written and imported
/// scenarios are a few kilobytes; parsing costs about 50 bytes of memory per byte of YAML, so
/// this keeps validation under a second and 200 MB.
pub const MAX_FILE_BYTES: usize = 4 * 1024 * 1024;
/// Most variants of a study (each is a full scenario, run `repeat` times).
pub const MAX_VARIANTS: usize = 1_000;
/// Most runs per variant of a study, and most sweep points.
pub const MAX_REPEAT: u64 = 10_000;
pub const MAX_SWEEP_POINTS: usize = 1_000;
/// Most confirmation runs of a capacity search.
pub const MAX_CONFIRM: u64 = 100;

/// `Duration` from seconds written as a number, within [`MAX_DURATION`].
pub fn duration_from_secs(secs: f64) -> Result<Duration, String> {
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!(
            "`{secs}` is not a duration: write a positive number of seconds or e.g. 500ms, 30s"
        ));
    }
    if secs > MAX_DURATION.as_secs_f64() {
        return Err(too_long(&format!("{secs} seconds")));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The message for a duration above [`MAX_DURATION`].
pub fn too_long(written: &str) -> String {
    format!("`{written}` is longer than the limit of 720h (30 days) for any duration")
}

/// The message for a count above its limit.
pub fn too_many(
    what: &str,
    value: impl std::fmt::Display,
    limit: impl std::fmt::Display,
) -> String {
    format!("{value} {what} is above the limit of {limit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_from_numbers_are_bounded() {
        assert_eq!(
            duration_from_secs(1.5).unwrap(),
            Duration::from_millis(1500)
        );
        assert_eq!(duration_from_secs(2_592_000.0).unwrap(), MAX_DURATION);
        for bad in [1e20, 2_592_000.5, f64::INFINITY, f64::NAN, -1.0] {
            assert!(duration_from_secs(bad).is_err(), "{bad}");
        }
        assert!(duration_from_secs(1e20).unwrap_err().contains("720h"));
    }
}
