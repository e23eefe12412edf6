//! Server-side latency as the server reports it in a response header, read per response
//! without allocating: the W3C `Server-Timing` header (`app;dur=12.3, db;dur=4;desc="q"`)
//! and single-duration headers such as `X-Response-Time: 12ms`.
//!
//! Written here rather than taken from a crate: the header grammar is a few lines of token
//! scanning, and the engine calls it for every response, so it must not allocate.

use std::time::Duration;

/// The `(name, dur)` entries of a `Server-Timing` header value that carry a `dur`;
/// entries without one, or with an unreadable or negative one, are skipped.
///
/// ```
/// use loadlab_metrics::server_timing_entries;
/// let got: Vec<_> = server_timing_entries(br#"cache;desc="hit, warm", app;dur=12.5, db;dur="4""#).collect();
/// assert_eq!(got, [("app", std::time::Duration::from_micros(12_500)), ("db", std::time::Duration::from_millis(4))]);
/// ```
pub fn server_timing_entries(value: &[u8]) -> ServerTimingEntries<'_> {
    ServerTimingEntries { rest: value }
}

/// The server's time for the whole request from a `Server-Timing` value: the `total` entry,
/// else the `app` entry, else the largest `dur` — never the sum, because entries may nest
/// (`request;dur=50, db;dur=30` is 50 ms, not 80). `None` when no entry has a duration.
///
/// ```
/// use loadlab_metrics::server_timing_duration;
/// use std::time::Duration;
/// assert_eq!(server_timing_duration(b"db;dur=30, app;dur=50"), Some(Duration::from_millis(50)));
/// assert_eq!(server_timing_duration(b"app;dur=5, total;dur=9"), Some(Duration::from_millis(9)));
/// assert_eq!(server_timing_duration(b"db;dur=30, render;dur=12"), Some(Duration::from_millis(30)));
/// ```
pub fn server_timing_duration(value: &[u8]) -> Option<Duration> {
    server_timing_micros(value).map(Duration::from_micros)
}

/// [`server_timing_duration`] in whole microseconds, as the engine records it per response:
/// names are found first and only the chosen entry's `dur` is parsed (the common
/// `app;dur=12.345` costs one scan and one short decimal), so no time is spent on numbers
/// that are not used.
pub fn server_timing_micros(value: &[u8]) -> Option<u64> {
    let mut app: Option<&[u8]> = None;
    let mut rest = value;
    while !rest.is_empty() {
        let mut entry = take_unquoted(&mut rest, b',');
        let name = trim(take_unquoted(&mut entry, b';'));
        if name.eq_ignore_ascii_case(b"total") {
            if let Some(us) = dur_param_micros(entry) {
                return Some(us);
            }
        } else if app.is_none() && name.eq_ignore_ascii_case(b"app") {
            app = Some(entry);
        }
    }
    if let Some(us) = app.and_then(dur_param_micros) {
        return Some(us);
    }
    server_timing_entries(value)
        .map(|(_, d)| d.as_micros() as u64)
        .max()
}

/// The `dur` parameter of an entry's parameters (`;dur=12.3;desc="x"`), in µs.
fn dur_param_micros(params: &[u8]) -> Option<u64> {
    dur_value(params).and_then(millis_text_micros)
}

/// The text of the first `dur` parameter (quotes removed), if any.
fn dur_value(mut params: &[u8]) -> Option<&[u8]> {
    while !params.is_empty() {
        let param = trim(take_unquoted(&mut params, b';'));
        let Some(eq) = param.iter().position(|&b| b == b'=') else {
            continue;
        };
        if !trim(&param[..eq]).eq_ignore_ascii_case(b"dur") {
            continue;
        }
        let value = trim(&param[eq + 1..]);
        if value.len() >= 2 && value[0] == b'"' && value[value.len() - 1] == b'"' {
            return Some(&value[1..value.len() - 1]);
        }
        return Some(value);
    }
    None
}

/// `12.345` (milliseconds) → 12345 µs: plain decimals by hand (the per-response case),
/// anything else (`1e3`) through `f64`.
fn millis_text_micros(text: &[u8]) -> Option<u64> {
    let (int, frac) = match text.iter().position(|&b| b == b'.') {
        Some(dot) => (&text[..dot], &text[dot + 1..]),
        None => (text, &b""[..]),
    };
    let plain = !int.is_empty()
        && int.len() <= 12
        && int.iter().all(u8::is_ascii_digit)
        && frac.iter().all(u8::is_ascii_digit);
    if !plain {
        let ms: f64 = std::str::from_utf8(text).ok()?.parse().ok()?;
        return millis(ms).map(|d| d.as_micros() as u64);
    }
    let mut us = int.iter().fold(0u64, |a, &b| a * 10 + u64::from(b - b'0')) * 1000;
    let mut scale = 100;
    for &b in frac.iter().take(3) {
        us += u64::from(b - b'0') * scale;
        scale /= 10;
    }
    Some(us)
}

/// Iterator returned by [`server_timing_entries`].
#[derive(Debug, Clone)]
pub struct ServerTimingEntries<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for ServerTimingEntries<'a> {
    type Item = (&'a str, Duration);

    fn next(&mut self) -> Option<Self::Item> {
        while !self.rest.is_empty() {
            let entry = take_unquoted(&mut self.rest, b',');
            if let Some(found) = parse_entry(entry) {
                return Some(found);
            }
        }
        None
    }
}

/// Splits off the text up to the next `sep` that is not inside a quoted string.
fn take_unquoted<'a>(rest: &mut &'a [u8], sep: u8) -> &'a [u8] {
    let s = *rest;
    // Fast path: the separator comes before any quote (or there is neither).
    match s.iter().position(|&b| b == sep || b == b'"') {
        None => {
            *rest = &[];
            return s;
        }
        Some(i) if s[i] == sep => {
            *rest = &s[i + 1..];
            return &s[..i];
        }
        Some(_) => {}
    }
    let mut quoted = false;
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'\\' if quoted => i += 1,
            b'"' => quoted = !quoted,
            b if b == sep && !quoted => {
                *rest = &s[i + 1..];
                return &s[..i];
            }
            _ => {}
        }
        i += 1;
    }
    *rest = &[];
    s
}

/// `name;param=value;...` → the name and its `dur` (milliseconds).
fn parse_entry(mut entry: &[u8]) -> Option<(&str, Duration)> {
    let name = std::str::from_utf8(trim(take_unquoted(&mut entry, b';'))).ok()?;
    if name.is_empty() {
        return None;
    }
    let ms: f64 = std::str::from_utf8(dur_value(entry)?).ok()?.parse().ok()?;
    millis(ms).map(|d| (name, d))
}

/// A single duration header such as `X-Response-Time`: `12ms`, `12.5 ms`, `0.012s`,
/// `850us`/`850µs`, `1000000ns`, or a bare number, read as milliseconds (the unit of
/// Express's `response-time` and most such middleware).
pub fn parse_duration_header(value: &[u8]) -> Option<Duration> {
    let v = trim(value);
    let end = v
        .iter()
        .position(|b| {
            !(b.is_ascii_digit()
                || *b == b'.'
                || *b == b'e'
                || *b == b'E'
                || *b == b'+'
                || *b == b'-')
        })
        .unwrap_or(v.len());
    let number: f64 = std::str::from_utf8(&v[..end]).ok()?.parse().ok()?;
    let unit = trim(&v[end..]);
    let ms = match unit {
        b"" | b"ms" => number,
        b"s" | b"sec" => number * 1e3,
        // `µs` in UTF-8.
        b"us" | b"\xc2\xb5s" => number / 1e3,
        b"ns" => number / 1e6,
        _ => return None,
    };
    millis(ms)
}

fn millis(ms: f64) -> Option<Duration> {
    (ms.is_finite() && ms >= 0.0).then(|| Duration::from_secs_f64(ms / 1e3))
}

fn trim(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &s[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: f64) -> Duration {
        Duration::from_secs_f64(v / 1e3)
    }

    #[test]
    fn server_timing_table() {
        let cases: &[(&str, &[(&str, f64)])] = &[
            ("app;dur=12.345", &[("app", 12.345)]),
            ("app;dur=53, db;dur=47.2", &[("app", 53.0), ("db", 47.2)]),
            ("  app ; DUR = 7 ", &[("app", 7.0)]),
            (r#"cache;desc="Cache Read";dur=23.2"#, &[("cache", 23.2)]),
            (
                r#"a;desc="x, y; z=1";dur=1, b;dur=2"#,
                &[("a", 1.0), ("b", 2.0)],
            ),
            (r#"a;desc="say \"hi\", ok";dur=3"#, &[("a", 3.0)]),
            (r#"a;desc="dur=5";dur=6"#, &[("a", 6.0)]),
            ("miss, db;dur=4", &[("db", 4.0)]),
            ("total;dur=\"9.5\"", &[("total", 9.5)]),
            ("app;dur=abc, db;dur=-1, q;dur=2", &[("q", 2.0)]),
            ("app;desc=x", &[]),
            (";dur=5", &[]),
            ("", &[]),
            (",,,", &[]),
            ("app;dur=1;dur=2", &[("app", 1.0)]),
        ];
        for (header, want) in cases {
            let got: Vec<(&str, Duration)> = server_timing_entries(header.as_bytes()).collect();
            let want: Vec<(&str, Duration)> = want.iter().map(|(n, v)| (*n, ms(*v))).collect();
            assert_eq!(got, want, "{header:?}");
        }
    }

    #[test]
    fn the_server_time_of_a_header() {
        let cases: &[(&str, Option<u64>)] = &[
            ("app;dur=12.345", Some(12_345)),
            ("db;dur=3.2, app;dur=12.345", Some(12_345)),
            ("app;dur=5, total;dur=9", Some(9_000)),
            ("total;desc=x, app;dur=5", Some(5_000)),
            ("db;dur=30, render;dur=12", Some(30_000)),
            (r#"cache;desc="a, total;dur=1";dur=2"#, Some(2_000)),
            ("app;dur=1e3", Some(1_000_000)),
            ("APP ; DUR = 7", Some(7_000)),
            ("app;dur=0.0004", Some(0)),
            ("app;dur=-1, db;dur=4", Some(4_000)),
            ("app;desc=x", None),
            ("", None),
        ];
        for (header, want) in cases {
            assert_eq!(server_timing_micros(header.as_bytes()), *want, "{header:?}");
        }
    }

    #[test]
    fn duration_headers_table() {
        let cases: &[(&str, Option<f64>)] = &[
            ("12ms", Some(12.0)),
            ("12.5 ms", Some(12.5)),
            ("0.012s", Some(12.0)),
            ("12", Some(12.0)),
            (" 3.25 ", Some(3.25)),
            ("850us", Some(0.85)),
            ("850µs", Some(0.85)),
            ("1000000ns", Some(1.0)),
            ("1e3ms", Some(1000.0)),
            ("12 minutes", None),
            ("ms", None),
            ("-5ms", None),
            ("", None),
        ];
        for (header, want) in cases {
            assert_eq!(
                parse_duration_header(header.as_bytes()),
                want.map(ms),
                "{header:?}"
            );
        }
    }
}
