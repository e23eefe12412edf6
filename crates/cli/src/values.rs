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

/// `h2` or `wire`: the engine's HTTP/2 client.
pub(crate) fn http2_client(text: &str) -> Result<loadlab_scenario::Http2Client, String> {
    loadlab_scenario::Http2Client::parse(text)
        .ok_or_else(|| format!("`{text}` is not an HTTP/2 client: use h2 or wire"))
}
