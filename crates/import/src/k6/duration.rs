//! k6's durations read as k6 reads them (Go's `time.ParseDuration`, plus whole days as in
//! `1d12h`, and a bare number — or a numeric string — as milliseconds), then written as a
//! loadlab duration or rate. A text k6 refuses (`'1 m'`, `'1M'`) is refused here too: read
//! any other way it would silently change the load.

use crate::scaffold::fmt_num;

const NS_PER_MS: u128 = 1_000_000;
const NS_PER_S: u128 = 1_000_000_000;
const NS_PER_M: u128 = 60 * NS_PER_S;
const NS_PER_H: u128 = 60 * NS_PER_M;

/// A k6 duration: its nanoseconds, and the text the script wrote when loadlab reads that text
/// the same way (kept as written, so `90s` stays `90s`).
#[derive(Debug, Clone, PartialEq)]
pub struct K6Duration {
    nanos: u128,
    as_written: Option<String>,
}

impl K6Duration {
    /// A duration given as a JavaScript number: milliseconds.
    pub fn from_millis(ms: f64) -> Result<Self, String> {
        if !ms.is_finite() || ms < 0.0 {
            return Err(format!(
                "`{}` is not a k6 duration: a number is milliseconds and cannot be negative",
                fmt_num(ms)
            ));
        }
        Ok(K6Duration {
            nanos: (ms * NS_PER_MS as f64).round() as u128,
            as_written: None,
        })
    }

    /// A duration given as text, as k6's `ParseExtendedDuration` reads it.
    pub fn parse(text: &str) -> Result<Self, String> {
        if let Some(ms) = numeric(text) {
            return Self::from_millis(ms);
        }
        let nanos = match text.split_once('d') {
            Some((days, rest)) => {
                let days: u128 = digits(days).ok_or_else(|| refused(text))?;
                let rest = if rest.is_empty() {
                    0
                } else {
                    go_duration(rest).ok_or_else(|| refused(text))?
                };
                days * 24 * NS_PER_H + rest
            }
            None => go_duration(text).ok_or_else(|| refused(text))?,
        };
        Ok(K6Duration {
            nanos,
            as_written: loadlab_reads_alike(text).then(|| text.to_string()),
        })
    }

    /// k6's default `timeUnit`.
    pub fn second() -> Self {
        K6Duration {
            nanos: NS_PER_S,
            as_written: Some("1s".into()),
        }
    }

    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    /// The duration as loadlab writes it: as the script wrote it when loadlab reads that text
    /// alike, else in hours, minutes, seconds and below (`1d` → `24h`, `60000` → `1m`).
    pub fn loadlab(&self) -> String {
        if let Some(t) = &self.as_written {
            return t.clone();
        }
        if self.nanos == 0 {
            return "0s".into();
        }
        let mut out = String::new();
        let mut rest = self.nanos;
        for (unit, ns) in [
            ("h", NS_PER_H),
            ("m", NS_PER_M),
            ("s", NS_PER_S),
            ("ms", NS_PER_MS),
            ("us", 1_000),
            ("ns", 1),
        ] {
            if rest >= ns {
                out.push_str(&format!("{}{unit}", rest / ns));
                rest %= ns;
            }
        }
        out
    }
}

/// `n` per `unit`, one text per value, all in the same loadlab unit: the unit k6's `timeUnit`
/// names when it is exactly 1s, 1m or 1h; else the first of `/s`, `/m`, `/h` in which every
/// value is exact (1 per 30s → `2/m`); else per second to six significant digits.
pub fn rates(values: &[f64], unit: &K6Duration) -> Vec<String> {
    let per = |ns: u128| -> Vec<f64> {
        values
            .iter()
            .map(|v| v * ns as f64 / unit.nanos as f64)
            .collect()
    };
    let named = [("s", NS_PER_S), ("m", NS_PER_M), ("h", NS_PER_H)];
    let choice = named.iter().find(|(_, ns)| *ns == unit.nanos).or_else(|| {
        named
            .iter()
            .find(|(_, ns)| per(*ns).iter().all(|v| exact(*v)))
    });
    match choice {
        Some((u, ns)) => per(*ns)
            .iter()
            .map(|v| format!("{}/{u}", fmt_num(*v)))
            .collect(),
        None => {
            let (u, ns) = named
                .iter()
                .find(|(_, ns)| per(*ns).iter().all(|v| *v >= 1.0))
                .unwrap_or(&named[2]);
            per(*ns)
                .iter()
                .map(|v| format!("{}/{u}", significant(*v)))
                .collect()
        }
    }
}

/// Whether [`fmt_num`]'s three decimals write `v` without rounding it.
fn exact(v: f64) -> bool {
    let scaled = v * 1000.0;
    (scaled - scaled.round()).abs() <= 1e-9 * scaled.abs().max(1.0)
}

/// `v` to six significant digits, without an exponent.
fn significant(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let decimals = (5 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn refused(text: &str) -> String {
    format!(
        "`{text}` is not a duration k6 accepts (k6 refuses to start with it): write e.g. '500ms', '30s', '1m30s', '2h', '1d' or a number of milliseconds"
    )
}

/// What Go's `strconv.ParseFloat` takes as a number (k6 reads it as milliseconds).
fn numeric(text: &str) -> Option<f64> {
    let t = text.strip_prefix('+').unwrap_or(text);
    let plain = !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'));
    if plain {
        t.parse().ok()
    } else {
        None
    }
}

fn digits(text: &str) -> Option<u128> {
    let t = text.strip_prefix('+').unwrap_or(text);
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// Go's `time.ParseDuration` for a duration that is not negative: `0`, or numbers each with
/// a unit (`1h30m`, `1.5s`, `250us`).
fn go_duration(text: &str) -> Option<u128> {
    let s = text.strip_prefix('+').unwrap_or(text);
    if s == "0" {
        return Some(0);
    }
    if s.is_empty() {
        return None;
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let n_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let n = &rest[..n_end];
        if n.is_empty() || n == "." {
            return None;
        }
        let n: f64 = n.parse().ok()?;
        rest = &rest[n_end..];
        let u_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let ns = match &rest[..u_end] {
            "h" => NS_PER_H,
            "m" => NS_PER_M,
            "s" => NS_PER_S,
            "ms" => NS_PER_MS,
            "us" | "µs" | "μs" => 1_000,
            "ns" => 1,
            _ => return None,
        };
        rest = &rest[u_end..];
        total += n * ns as f64;
    }
    Some(total.round() as u128)
}

/// Whether loadlab's own duration syntax reads `text` as k6 does: units it knows, no days,
/// no sign, not a bare number (milliseconds to k6, seconds to loadlab).
fn loadlab_reads_alike(text: &str) -> bool {
    numeric(text).is_none() && !text.contains(['d', '+', 'μ']) && go_duration(text).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k6_durations_as_loadlab_writes_them() {
        let table = [
            ("30s", Ok("30s")),
            ("1m30s", Ok("1m30s")),
            ("90s", Ok("90s")),
            ("500ms", Ok("500ms")),
            ("250us", Ok("250us")),
            ("1d", Ok("24h")),
            ("2d", Ok("48h")),
            ("1d12h", Ok("36h")),
            ("60000", Ok("1m")),
            ("60", Ok("60ms")),
            ("1500", Ok("1s500ms")),
            ("1.5h", Ok("1.5h")),
            ("+1m", Ok("1m")),
            ("1 m", Err(())),
            ("1M", Err(())),
            (" 1m", Err(())),
            ("1m ", Err(())),
            ("m", Err(())),
            ("", Err(())),
            ("1x", Err(())),
            ("-1m", Err(())),
            ("1.5d", Err(())),
            ("1d-1h", Err(())),
        ];
        for (text, want) in table {
            let got = K6Duration::parse(text).map(|d| d.loadlab()).map_err(|_| ());
            assert_eq!(got, want.map(str::to_string), "k6 duration `{text}`");
        }
        assert_eq!(K6Duration::from_millis(60000.0).unwrap().loadlab(), "1m");
        assert_eq!(K6Duration::from_millis(2.5).unwrap().loadlab(), "2ms500us");
        assert!(K6Duration::from_millis(-1.0).is_err());
    }

    #[test]
    fn rates_are_exact_in_the_unit_chosen() {
        let d = |t: &str| K6Duration::parse(t).unwrap();
        let table: [(&[f64], &str, &[&str]); 11] = [
            (&[20.0], "1s", &["20/s"]),
            (&[300.0], "1m", &["300/m"]),
            (&[5.0], "1h", &["5/h"]),
            (&[10.0], "2s", &["5/s"]),
            (&[1.0], "30s", &["2/m"]),
            (&[1.0], "2m", &["0.5/m"]),
            (&[6.0, 60.0], "60000", &["6/m", "60/m"]),
            (&[3.0], "60", &["50/s"]),
            (&[10000.0], "1d", &["6.94444/m"]),
            (&[60.0], "2h", &["0.5/m"]),
            (&[1.0], "7h", &["0.142857/h"]),
        ];
        for (values, unit, want) in table {
            assert_eq!(rates(values, &d(unit)), want, "{values:?} per {unit}");
        }
    }
}
