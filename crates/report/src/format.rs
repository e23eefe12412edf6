//! Number formatting shared by every renderer, so a latency reads the same in all of them.

/// A duration in milliseconds, in the largest unit that keeps it readable:
/// `0.123` → `123µs`, `12.3456` → `12.35ms`, `2800.0` → `2.80s`, `65000.0` → `1m5s`.
pub fn format_ms(ms: f64) -> String {
    if ms.is_nan() {
        return "n/a".to_string();
    }
    if ms < 0.0 {
        return format!("-{}", format_ms(-ms));
    }
    if ms.is_infinite() {
        return "∞".to_string();
    }
    let us = ms * 1000.0;
    if us.round() < 1000.0 {
        return format!("{us:.0}µs");
    }
    if (ms * 100.0).round() < 100_000.0 {
        return format!("{ms:.2}ms");
    }
    let secs = ms / 1000.0;
    if (secs * 100.0).round() < 6_000.0 {
        return format!("{secs:.2}s");
    }
    let total = secs.round() as u64;
    let (h, m, s) = (total / 3600, (total % 3600) / 60, total % 60);
    if h > 0 {
        format!("{h}h{m}m{s}s")
    } else {
        format!("{m}m{s}s")
    }
}

/// A duration in seconds (run lengths, warm-ups: settings more than measurements), with the
/// units of [`format_ms`] but no trailing zeros: `10s`, `2.5s`, `200ms`, `1m0s`.
pub(crate) fn format_secs(secs: f64) -> String {
    trim_zeros(&format_ms(secs * 1000.0))
}

/// `10.00s` → `10s`, `12.30ms` → `12.3ms`: the decimals of a formatted number without its
/// trailing zeros; text without a decimal point is returned as it is.
pub(crate) fn trim_zeros(formatted: &str) -> String {
    let Some(dot) = formatted.find('.') else {
        return formatted.to_string();
    };
    let digits_end = formatted[dot + 1..]
        .find(|c: char| !c.is_ascii_digit())
        .map_or(formatted.len(), |i| dot + 1 + i);
    let decimals = formatted[dot + 1..digits_end].trim_end_matches('0');
    let number = if decimals.is_empty() {
        formatted[..dot].to_string()
    } else {
        format!("{}.{decimals}", &formatted[..dot])
    };
    format!("{number}{}", &formatted[digits_end..])
}

/// `part` as a percentage of `whole`, `0.00%` when `whole` is zero.
pub(crate) fn percent_of(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0.00%".to_string();
    }
    format_fraction(part as f64 / whole as f64)
}

/// A fraction (0.0123) as a percentage (`1.23%`).
pub(crate) fn format_fraction(f: f64) -> String {
    format!("{:.2}%", f * 100.0)
}

/// A throughput per second.
pub(crate) fn format_rate(r: f64) -> String {
    format!("{r:.1}/s")
}

/// A plain number: integers without decimals, others with two.
pub(crate) fn format_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// Bytes as people read them: `812 B`, `45.3 KiB`, `312.0 MiB`, `2.50 GiB`.
pub(crate) fn format_bytes(b: f64) -> String {
    const K: f64 = 1024.0;
    if !b.is_finite() {
        "n/a".into()
    } else if b.abs() < K {
        format!("{b:.0} B")
    } else if b.abs() < K * K {
        format!("{:.1} KiB", b / K)
    } else if b.abs() < K * K * K {
        format!("{:.1} MiB", b / (K * K))
    } else {
        format!("{:.2} GiB", b / (K * K * K))
    }
}

/// A measured value without a known unit: three significant digits, no exponent.
pub(crate) fn format_plain(x: f64) -> String {
    let a = x.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// The unit of a threshold's metric, read from its expression
/// (`latency.p95 < 2.8s`, `http.errors < 5%`, `requests.rate > 100`, `step.x.failed < 10`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Millis,
    Fraction,
    PerSecond,
    Number,
}

impl Unit {
    /// The unit of the threshold's metric, from the parsed threshold (a number without a
    /// unit when the expression does not parse).
    pub(crate) fn of_threshold(expr: &str) -> Unit {
        use loadlab_scenario::threshold::{Quantity, StreamFigure, Threshold};
        match Threshold::parse(expr).map(|t| t.metric.quantity) {
            Ok(
                Quantity::Latency(_)
                | Quantity::CompensatedLatency(_)
                | Quantity::ServiceTime(_)
                | Quantity::Phase(..)
                | Quantity::StreamTime(..),
            ) => Unit::Millis,
            Ok(Quantity::ErrorRate | Quantity::Stream(StreamFigure::GoodRatio)) => Unit::Fraction,
            Ok(
                Quantity::RequestRate
                | Quantity::Stream(StreamFigure::TokensPerS | StreamFigure::Goodput),
            ) => Unit::PerSecond,
            Ok(Quantity::Requests | Quantity::Failed | Quantity::Stream(_)) | Err(_) => {
                Unit::Number
            }
        }
    }

    pub(crate) fn format(self, x: f64) -> String {
        match self {
            Unit::Millis => format_ms(x),
            Unit::Fraction => format_fraction(x),
            Unit::PerSecond => format_rate(x),
            Unit::Number => format_number(x),
        }
    }
}

/// Shortens `s` to at most `width` characters, cutting the middle (`GET /api/…/orders`)
/// so that both the start and the distinguishing end of a step name stay visible.
pub(crate) fn truncate(s: &str, width: usize) -> String {
    let n = s.chars().count();
    if n <= width {
        return s.to_string();
    }
    if width <= 1 {
        return "…".chars().take(width).collect();
    }
    let keep = width - 1;
    let tail = keep / 3;
    let head = keep - tail;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_ms_table() {
        for (ms, want) in [
            (0.0, "0µs"),
            (0.001, "1µs"),
            (0.123, "123µs"),
            (0.9994, "999µs"),
            (0.9996, "1.00ms"),
            (1.0, "1.00ms"),
            (12.3456, "12.35ms"),
            (999.994, "999.99ms"),
            (999.996, "1.00s"),
            (2800.0, "2.80s"),
            (59_994.0, "59.99s"),
            (59_996.0, "1m0s"),
            (65_000.0, "1m5s"),
            (3_600_000.0, "1h0m0s"),
            (3_725_000.0, "1h2m5s"),
            (-12.3456, "-12.35ms"),
            (f64::NAN, "n/a"),
        ] {
            assert_eq!(format_ms(ms), want, "{ms}");
        }
    }

    #[test]
    fn durations_have_no_trailing_zeros() {
        for (secs, want) in [
            (10.0, "10s"),
            (2.5, "2.5s"),
            (0.2, "200ms"),
            (0.0125, "12.5ms"),
            (60.0, "1m0s"),
            (0.0005, "500µs"),
            (1.234, "1.23s"),
        ] {
            assert_eq!(format_secs(secs), want, "{secs}");
        }
    }

    #[test]
    fn threshold_units() {
        for (expr, unit) in [
            ("latency.p95 < 2.8s", Unit::Millis),
            ("service_time.max >= 1ms", Unit::Millis),
            ("step.signin.latency.p99 < 1s", Unit::Millis),
            ("http.errors < 5%", Unit::Fraction),
            ("errors.rate <= 0.01", Unit::Fraction),
            ("group.api.errors < 1%", Unit::Fraction),
            ("http.error_rate < 1%", Unit::Fraction),
            ("requests.rate > 100", Unit::PerSecond),
            ("rate > 100", Unit::PerSecond),
            ("requests > 1000", Unit::Number),
            ("step.errors page.failed < 10", Unit::Number),
            ("step.rate card.latency.p95 < 1s", Unit::Millis),
        ] {
            assert_eq!(Unit::of_threshold(expr), unit, "{expr}");
        }
        assert_eq!(Unit::Fraction.format(0.0123), "1.23%");
        assert_eq!(Unit::PerSecond.format(412.345), "412.3/s");
        assert_eq!(Unit::Number.format(1000.0), "1000");
        assert_eq!(Unit::Millis.format(48.2), "48.20ms");
    }

    #[test]
    fn truncation() {
        assert_eq!(truncate("short", 10), "short");
        assert_eq!(truncate("exactly10c", 10), "exactly10c");
        let t = truncate("GET /api/v1/users/{id}/orders/recent", 20);
        assert_eq!(t.chars().count(), 20);
        assert_eq!(t, "GET /api/v1/u…recent");
        assert_eq!(truncate("abc", 1), "…");
        assert_eq!(truncate("abc", 0), "");
    }
}
