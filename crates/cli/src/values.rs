//! The values of flags, parsed by clap as it reads them: a command receives a `Duration`, a
//! rate or a fraction, never the text, so each flag is parsed once and its error (exit 2)
//! names it in clap's own words.

use std::time::Duration;

/// `500ms`, `30s`, `1m30s` (the scenario file's duration syntax).
pub(crate) fn duration(text: &str) -> Result<Duration, String> {
    loadlab_scenario::units::parse_duration(text)
}

/// `200/s`, `12000/m`, or a bare number per second (the scenario file's rate syntax).
pub(crate) fn rate(text: &str) -> Result<f64, String> {
    loadlab_scenario::units::parse_rate(text)
}

/// `5%` or `0.05`, as a fraction.
pub(crate) fn fraction(text: &str) -> Result<f64, String> {
    loadlab_scenario::study::parse_fraction_text(text)
}

/// `1%` or `0.01`: an error rate, at most 100%.
pub(crate) fn error_rate(text: &str) -> Result<f64, String> {
    loadlab_scenario::study::parse_error_rate_text(text)
}

/// `h2` or `wire`: the engine's HTTP/2 client.
pub(crate) fn http2_client(text: &str) -> Result<loadlab_scenario::Http2Client, String> {
    loadlab_scenario::Http2Client::parse(text)
        .ok_or_else(|| format!("`{text}` is not an HTTP/2 client: use h2 or wire"))
}

/// A count of VUs, requests or connections: a whole number written in digits (`1e9` or
/// `1.5` were "invalid digit found in string").
pub(crate) fn count<T: std::str::FromStr + TryFrom<u64>>(text: &str) -> Result<T, String> {
    let t = text.trim().replace('_', "");
    let whole: u64 = t.parse().map_err(|_| {
        format!("`{text}` is not a whole number: write it in digits, e.g. 50 or 10000")
    })?;
    T::try_from(whole).map_err(|_| format!("`{text}` is too large"))
}

/// The most threads `--threads` takes: more than cores only take turns on them, and each
/// costs a stack and a timer (100,000 ran the host out of memory).
pub(crate) const MAX_THREADS: usize = 1024;

/// `1` to `MAX_THREADS` worker or server threads.
pub(crate) fn threads(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{text}` is not a thread count: give 1 to {MAX_THREADS} (one per core is the most that helps)"
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn thread_counts_are_bounded() {
        assert_eq!(super::threads("4"), Ok(4));
        assert_eq!(super::threads("1024"), Ok(1024));
        for bad in ["0", "1025", "100000", "-1", "two", ""] {
            assert!(super::threads(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn counts_are_whole_numbers_in_digits() {
        assert_eq!(super::count::<u32>("50"), Ok(50));
        assert_eq!(super::count::<u64>("10_000"), Ok(10_000));
        let said = super::count::<u32>("1e9").unwrap_err();
        assert!(
            said.contains("not a whole number: write it in digits"),
            "{said}"
        );
        assert!(super::count::<u32>("1.5").is_err());
        assert!(super::count::<u32>("-3").is_err());
        assert_eq!(
            super::count::<u32>("99999999999"),
            Err("`99999999999` is too large".to_string())
        );
    }
}
