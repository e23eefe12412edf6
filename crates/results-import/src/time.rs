//! Timestamps of the tools' files as µs since the Unix epoch: RFC 3339 with any offset and
//! up to nanoseconds (k6), so no date library is needed on the hot path of a 1 GB file.

/// Parses `2024-05-01T12:00:00.123456789+02:00` (or `Z`) into µs since the epoch.
pub fn rfc3339_us(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let mut n = 0i64;
        for &c in b.get(r)? {
            if !c.is_ascii_digit() {
                return None;
            }
            n = n * 10 + i64::from(c - b'0');
        }
        Some(n)
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if b[13] != b':' || b[16] != b':' || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let mut i = 19;
    let mut micros = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let mut digits = 0;
        while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            if digits < 6 {
                micros = micros * 10 + i64::from(c - b'0');
            }
            digits += 1;
            i += 1;
        }
        if digits == 0 {
            return None;
        }
        for _ in digits..6 {
            micros *= 10;
        }
    }
    let offset_s = match b.get(i)? {
        b'Z' | b'z' if i + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if i + 6 == b.len() && b[i + 3] == b':' => {
            let o = num(i + 1..i + 3)? * 3600 + num(i + 4..i + 6)? * 60;
            if *sign == b'+' {
                o
            } else {
                -o
            }
        }
        _ => return None,
    };
    let days = days_from_civil(y, m, d);
    let secs = days * 86_400 + hh * 3600 + mm * 60 + ss - offset_s;
    Some(secs * 1_000_000 + micros)
}

/// Parses a date and time without a zone, as JMeter writes them under a
/// `timestamp_format` such as `yyyy/MM/dd HH:mm:ss.SSS` (`2019/12/05 12:37:24`, `-` also taken
/// between the date's parts, fractions optional), read as UTC: ms since the epoch.
pub fn zoneless_ms(s: &str) -> Option<i64> {
    let b = s.trim().as_bytes();
    if b.len() < 19 || !matches!(b[4], b'/' | b'-') || b[7] != b[4] || b[10] != b' ' {
        return None;
    }
    let mut text: String = s.trim().replace('/', "-");
    text.push('Z');
    rfc3339_us(&text).map(|us| us.div_euclid(1000))
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoneless_dates_are_read_as_utc() {
        let cases = [
            ("2019/12/05 12:37:24", Some(1_575_549_444_000)),
            ("2019/12/05 12:37:24.250", Some(1_575_549_444_250)),
            ("2019-12-05 12:37:24", Some(1_575_549_444_000)),
            ("2019/12-05 12:37:24", None),
            ("1575549444000", None),
            ("05/12/2019 12:37:24", None),
        ];
        for (text, want) in cases {
            assert_eq!(zoneless_ms(text), want, "{text}");
        }
    }

    #[test]
    fn offsets_and_fractions_are_read() {
        assert_eq!(rfc3339_us("1970-01-01T00:00:01Z"), Some(1_000_000));
        assert_eq!(
            rfc3339_us("2017-05-09T14:34:45.625742514+02:00"),
            Some(1_494_333_285_625_742)
        );
        assert_eq!(
            rfc3339_us("2017-05-09T12:34:45.6257Z"),
            Some(1_494_333_285_625_700)
        );
        assert_eq!(rfc3339_us("2017-05-09 12:34:45"), None);
        assert_eq!(rfc3339_us("not a time at all, no"), None);
    }
}
