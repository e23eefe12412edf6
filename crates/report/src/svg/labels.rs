//! Text of a chart: tick labels, tooltip values and short numbers in SVG coordinates.

use crate::chart::Unit;

/// `x` with at most `decimals` decimals, trailing zeros dropped.
pub(super) fn trim(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".to_string()
    } else {
        s
    }
}

pub(super) fn fmt_plain(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6, 2))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3, 1))
    } else {
        trim(v, 3)
    }
}

pub(super) fn fmt_tick(unit: Unit, v: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    match unit {
        Unit::Millis => {
            let a = v.abs();
            if a < 1.0 {
                format!("{}µs", trim(v * 1000.0, 1))
            } else if a < 1000.0 {
                format!("{}ms", trim(v, 2))
            } else if a < 60_000.0 {
                format!("{}s", trim(v / 1000.0, 2))
            } else {
                format!("{}m", trim(v / 60_000.0, 1))
            }
        }
        Unit::Seconds => format!("{}s", trim(v, 2)),
        Unit::PerSecond => format!("{}/s", fmt_plain(v)),
        Unit::Fraction => format!("{}%", trim(v * 100.0, 2)),
        Unit::Percent => format!("{}%", trim(v, 1)),
        Unit::Bytes => fmt_bytes_tick(v),
        Unit::Count | Unit::Plain => fmt_plain(v),
    }
}

fn fmt_bytes_tick(v: f64) -> String {
    const K: f64 = 1024.0;
    let unit = [K * K * K, K * K, K]
        .into_iter()
        .find(|u| v.abs() >= *u)
        .unwrap_or(1.0);
    bytes_in_unit(v, unit)
}

/// `v` bytes written in `unit` (1, 1024, 1024², 1024³): `1.5MiB`.
pub(super) fn bytes_in_unit(v: f64, unit: f64) -> String {
    let name = match unit as u64 {
        1 => "B",
        1024 => "KiB",
        1_048_576 => "MiB",
        _ => "GiB",
    };
    format!("{}{name}", trim(v / unit, 2))
}

/// A value as shown in point tooltips.
pub(super) fn fmt_value(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Millis => crate::format::trim_zeros(&crate::format::format_ms(v)),
        Unit::Fraction => crate::format::format_fraction(v),
        Unit::PerSecond => crate::format::format_rate(v),
        Unit::Seconds => format!("{}s", trim(v, 2)),
        Unit::Percent => format!("{}%", trim(v, 1)),
        Unit::Bytes => crate::format::format_bytes(v),
        Unit::Count | Unit::Plain => trim(v, 3),
    }
}

pub(super) fn shorten(s: &str, n: usize) -> String {
    crate::format::truncate(s, n)
}

pub(super) fn f(x: f64) -> String {
    trim(x, 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg::scale::nice_step;

    #[test]
    fn ticks_and_labels() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(23.0), 25.0);
        assert_eq!(fmt_tick(Unit::Millis, 0.5), "500µs");
        assert_eq!(fmt_tick(Unit::Millis, 2500.0), "2.5s");
        assert_eq!(fmt_tick(Unit::Fraction, 0.05), "5%");
        assert_eq!(fmt_tick(Unit::PerSecond, 12000.0), "12k/s");
        assert_eq!(trim(99.9, 1), "99.9");
        assert_eq!(fmt_tick(Unit::Percent, 150.0), "150%");
        assert_eq!(fmt_tick(Unit::Bytes, 50.0 * 1024.0 * 1024.0), "50MiB");
    }
}
