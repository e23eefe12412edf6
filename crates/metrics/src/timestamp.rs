//! Timestamps of results and records: RFC 3339 in UTC and seconds since the Unix epoch,
//! without a date-time dependency.

use std::time::SystemTime;

/// UTC timestamp `2026-11-22T07:30:00Z` without a date-time dependency.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff]Z` (UTC, what results and `--start-at` use).
pub fn parse_rfc3339(s: &str) -> Option<SystemTime> {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() < 20 || !s.ends_with('Z') || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let frac = &s[19..s.len() - 1];
    let nanos: u32 = match frac.strip_prefix('.') {
        None if frac.is_empty() => 0,
        Some(digits)
            if !digits.is_empty()
                && digits.len() <= 9
                && digits.bytes().all(|c| c.is_ascii_digit()) =>
        {
            format!("{digits:0<9}").parse().ok()?
        }
        _ => return None,
    };
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3600 + mm * 60 + ss;
    u64::try_from(secs)
        .ok()
        .map(|s| SystemTime::UNIX_EPOCH + std::time::Duration::new(s, nanos))
}

/// Seconds since the Unix epoch (negative before it), with sub-second precision.
pub fn unix_seconds(t: SystemTime) -> f64 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

/// The inverse of [`unix_seconds`].
pub fn from_unix_seconds(s: f64) -> SystemTime {
    if s >= 0.0 {
        SystemTime::UNIX_EPOCH + std::time::Duration::from_secs_f64(s.min(1e12))
    } else {
        SystemTime::UNIX_EPOCH - std::time::Duration::from_secs_f64((-s).min(1e12))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_305_600 + 3661);
        assert_eq!(rfc3339(t), "2026-11-22T01:01:01Z");
    }

    #[test]
    fn parses_what_it_writes() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600 + 3723);
        assert_eq!(parse_rfc3339(&rfc3339(t)), Some(t));
        let ms = parse_rfc3339("2026-11-23T10:00:00.250Z").unwrap();
        assert_eq!(rfc3339(ms), "2026-11-23T10:00:00Z");
        assert!(
            (unix_seconds(ms)
                - unix_seconds(parse_rfc3339("2026-11-23T10:00:00Z").unwrap())
                - 0.25)
                .abs()
                < 1e-6
        );
        for bad in [
            "",
            "2026-11-23",
            "2026-11-23T10:00:00",
            "2026-13-01T00:00:00Z",
            "2026-11-23T10:00:00.Z",
            "x026-11-23T10:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
