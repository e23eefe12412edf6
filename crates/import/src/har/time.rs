//! HAR timestamps (`2026-11-26T16:00:00.123+01:00`) as milliseconds since 1970, for the
//! pauses between requests; no date crate needed for one format.

pub fn parse_ms(text: &str) -> Option<f64> {
    let text = text.trim();
    let (date, rest) = text.split_once('T')?;
    let mut d = date.split('-');
    let (y, m, day): (i64, i64, i64) = (
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
    );
    let (clock, offset_min) = if let Some(c) = rest.strip_suffix('Z') {
        (c, 0)
    } else if let Some(i) = rest.rfind(['+', '-']) {
        let (c, off) = rest.split_at(i);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        let off = &off[1..];
        let (h, mi) = off
            .split_once(':')
            .unwrap_or((off.get(..2)?, off.get(2..)?));
        (
            c,
            sign * (h.parse::<i64>().ok()? * 60 + mi.parse::<i64>().ok()?),
        )
    } else {
        (rest, 0)
    };
    let mut c = clock.split(':');
    let h: i64 = c.next()?.parse().ok()?;
    let mi: i64 = c.next()?.parse().ok()?;
    let s: f64 = c.next()?.parse().ok()?;
    let days = days_from_civil(y, m, day);
    let secs = days * 86_400 + h * 3600 + mi * 60 - offset_min * 60;
    Some(secs as f64 * 1000.0 + s * 1000.0)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
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
    fn timestamps() {
        assert_eq!(parse_ms("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(parse_ms("1970-01-01T00:00:01.250Z"), Some(1250.0));
        assert_eq!(
            parse_ms("2026-11-26T16:00:00.000Z"),
            Some(1_795_708_800_000.0)
        );
        assert_eq!(
            parse_ms("2026-11-26T17:00:00.000+01:00"),
            parse_ms("2026-11-26T16:00:00.000Z")
        );
        assert_eq!(
            parse_ms("2026-11-26T15:30:00.000-00:30"),
            parse_ms("2026-11-26T16:00:00.000Z")
        );
        assert_eq!(parse_ms("yesterday"), None);
    }
}
