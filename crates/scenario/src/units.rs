//! Durations (`500ms`, `1m30s`) and rates (`200/s`, `12000/m`) as people write them.

use crate::limits::{duration_from_secs, too_long, MAX_DURATION};
use serde::de::{self, Deserializer, Visitor};
use std::fmt;
use std::time::Duration;

/// A YAML scalar as text, as these values are written (`500ms`, `0.05`, `30`, `true`);
/// `None` for mappings and sequences.
pub fn yaml_scalar_text(v: &serde_yaml_ng::Value) -> Option<String> {
    use serde_yaml_ng::Value;
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Parses `500ms`, `30s`, `1m30s`, `8m30s`, `1h`, `2.5s`, `250us`. A bare `0` is zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let s = text.trim();
    if s.is_empty() {
        return Err("empty duration: expected e.g. 500ms, 30s, 1m30s".into());
    }
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(bad_duration(text));
        }
        let value: f64 = rest[..num_len].parse().map_err(|_| bad_duration(text))?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds_per_unit = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return Err(bad_duration(text)),
        };
        rest = &rest[unit_len..];
        total += value * seconds_per_unit;
    }
    if !total.is_finite() {
        return Err(bad_duration(text));
    }
    if total > MAX_DURATION.as_secs_f64() {
        return Err(too_long(s));
    }
    Ok(Duration::from_secs_f64(total))
}

fn bad_duration(text: &str) -> String {
    format!("invalid duration `{text}`: expected a number with a unit, e.g. 500ms, 30s, 1m30s, 2h")
}

/// Parses `200/s`, `12000/m`, `5/h`, or a bare number (per second). Returns events per second.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let s = text.trim();
    let (num, per) = match s.split_once('/') {
        Some((n, unit)) => {
            let per = match unit.trim() {
                "s" | "sec" | "1s" => 1.0,
                "m" | "min" | "1m" => 60.0,
                "h" | "1h" => 3600.0,
                _ => return Err(bad_rate(text)),
            };
            (n.trim(), per)
        }
        None => (s, 1.0),
    };
    let value: f64 = num.parse().map_err(|_| bad_rate(text))?;
    if !value.is_finite() || value < 0.0 {
        return Err(bad_rate(text));
    }
    Ok(value / per)
}

fn bad_rate(text: &str) -> String {
    format!("invalid rate `{text}`: expected e.g. 200/s, 12000/m, or a number per second")
}

/// Short human form of a duration: `1m30s`, `250ms`, `1.5s`.
pub fn format_duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs == 0.0 {
        return "0s".into();
    }
    if secs < 1e-3 {
        return format!("{:.0}µs", secs * 1e6);
    }
    if secs < 1.0 {
        return format!("{}ms", trim_float(secs * 1e3));
    }
    let whole = d.as_secs();
    if whole >= 60 && d.subsec_nanos() == 0 {
        let (h, m, s) = (whole / 3600, (whole % 3600) / 60, whole % 60);
        let mut out = String::new();
        if h > 0 {
            out.push_str(&format!("{h}h"));
        }
        if m > 0 {
            out.push_str(&format!("{m}m"));
        }
        if s > 0 {
            out.push_str(&format!("{s}s"));
        }
        return out;
    }
    format!("{}s", trim_float(secs))
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Serde helper: a duration written as `30s` (or a number of seconds).
pub fn de_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    d.deserialize_any(DurationVisitor)
}

pub fn de_opt_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    d.deserialize_any(DurationVisitor).map(Some)
}

struct DurationVisitor;

impl Visitor<'_> for DurationVisitor {
    type Value = Duration;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a duration such as 500ms, 30s or 1m30s")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
        parse_duration(v).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
        if v > MAX_DURATION.as_secs() {
            return Err(E::custom(too_long(&format!("{v} seconds"))));
        }
        Ok(Duration::from_secs(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
        let v = u64::try_from(v).map_err(|_| E::custom("a duration cannot be negative"))?;
        self.visit_u64(v)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Duration, E> {
        duration_from_secs(v).map_err(E::custom)
    }
}

/// Serde helper: a rate written as `200/s` (or a number per second).
pub fn de_opt_rate<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    d.deserialize_any(RateVisitor).map(Some)
}

struct RateVisitor;

impl Visitor<'_> for RateVisitor {
    type Value = f64;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a rate such as 200/s or 12000/m")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
        parse_rate(v).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        if v < 0 {
            return Err(E::custom("a rate cannot be negative"));
        }
        Ok(v as f64)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        parse_rate(&v.to_string()).map_err(E::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_table() {
        let ok = [
            ("500ms", 0.5),
            ("30s", 30.0),
            ("1m30s", 90.0),
            ("8m30s", 510.0),
            ("1h", 3600.0),
            ("2.5s", 2.5),
            ("250us", 0.00025),
            ("0", 0.0),
            ("1h2m3s", 3723.0),
        ];
        for (text, secs) in ok {
            let d = parse_duration(text).unwrap();
            assert!((d.as_secs_f64() - secs).abs() < 1e-9, "{text}");
        }
        for bad in [
            "", "10", "10x", "s", "1m30", "-1s", "1.2.3s", "721h", "1e20s",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad} should fail");
        }
        assert!(parse_duration("99999999999999999999h")
            .unwrap_err()
            .contains("limit of 720h"));
        assert_eq!(parse_duration("720h").unwrap(), MAX_DURATION);
    }

    #[test]
    fn rates_table() {
        let ok = [
            ("200/s", 200.0),
            ("12000/m", 200.0),
            ("36/h", 0.01),
            ("75", 75.0),
            ("2.5/s", 2.5),
        ];
        for (text, per_sec) in ok {
            assert!(
                (parse_rate(text).unwrap() - per_sec).abs() < 1e-12,
                "{text}"
            );
        }
        for bad in ["", "x/s", "10/d", "-5/s"] {
            assert!(parse_rate(bad).is_err(), "{bad} should fail");
        }
    }

    #[test]
    fn formats_durations() {
        assert_eq!(format_duration(Duration::from_secs(90)), "1m30s");
        assert_eq!(format_duration(Duration::from_millis(250)), "250ms");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format_duration(Duration::from_secs(3600)), "1h");
    }
}
