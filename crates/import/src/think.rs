//! Recorded pauses between requests become `think` steps, rounded so they read as a person's
//! pauses rather than a clock's.

/// Gaps shorter than this are the browser's own pace, not a person thinking.
pub const MIN_THINK_MS: f64 = 100.0;

/// Longest pause kept: a longer gap (a recording left open for days, two sessions in one
/// file) is no person's pause inside a flow, and past loadlab's duration limit.
pub const MAX_THINK_MS: f64 = 600_000.0;

/// The `think:` value for a recorded gap in milliseconds, or `None` when it is too short to
/// matter. Below 1 s: to the 100 ms; below 10 s: to the half second; then to the second, at
/// most [`MAX_THINK_MS`].
pub fn think_for_gap(gap_ms: f64) -> Option<String> {
    if !gap_ms.is_finite() || gap_ms < MIN_THINK_MS {
        return None;
    }
    let gap_ms = gap_ms.min(MAX_THINK_MS);
    if gap_ms < 950.0 {
        let tenths = (gap_ms / 100.0).round() as u64;
        return Some(format!("{}ms", tenths * 100));
    }
    if gap_ms < 9750.0 {
        let halves = (gap_ms / 500.0).round() as u64;
        return Some(if halves & 1 == 1 {
            format!("{}.5s", halves / 2)
        } else {
            format!("{}s", halves / 2)
        });
    }
    Some(format!("{}s", (gap_ms / 1000.0).round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_round_to_readable_pauses() {
        let cases: &[(f64, Option<&str>)] = &[
            (0.0, None),
            (99.9, None),
            (-5.0, None),
            (f64::NAN, None),
            (100.0, Some("100ms")),
            (149.0, Some("100ms")),
            (151.0, Some("200ms")),
            (949.0, Some("900ms")),
            (950.0, Some("1s")),
            (1240.0, Some("1s")),
            (1260.0, Some("1.5s")),
            (2730.0, Some("2.5s")),
            (9749.0, Some("9.5s")),
            (9750.0, Some("10s")),
            (12_400.0, Some("12s")),
            (90_600.0, Some("91s")),
            (9_117_098_000.0, Some("600s")),
        ];
        for (gap, want) in cases {
            assert_eq!(think_for_gap(*gap).as_deref(), *want, "gap {gap} ms");
        }
    }
}
