//! k6 `--out csv=FILE`: a header, then one sample a line: `metric_name`, `timestamp` (Unix
//! seconds by default; ms or µs with `timeFormat`; RFC 3339 with `timeFormat=rfc3339_nano`), `metric_value` (ms for times) and the
//! tags as columns (`method`, `name`, `group`, `scenario`, `status`, `error_code`,
//! `expected_response`...). The same metrics as the JSON output are read; timestamps in
//! whole seconds place each request in its second, which is what the record's intervals are.

use crate::builder::RecordBuilder;
use crate::csv::split;
use crate::lines::Lines;
use crate::problems::Malformed;
use crate::ReadError;
use std::io::BufRead;

pub fn read(
    input: impl BufRead,
    builder: &mut RecordBuilder,
    malformed: &mut Malformed,
) -> Result<(), ReadError> {
    let mut lines = Lines::new(input);
    let mut fields = Vec::new();
    let mut header: Option<Vec<String>> = None;
    let mut json_reader = crate::k6_json::PointSink::new();
    while let Some((n, line)) = lines.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        split(line, ',', &mut fields);
        if header.is_none() {
            if !fields.iter().any(|f| f == "metric_name") {
                return Err(ReadError::Bad(
                    "the first line is not k6's CSV header (metric_name,timestamp,metric_value,...)"
                        .to_string(),
                ));
            }
            header = Some(fields.clone());
            continue;
        }
        let names = header.as_ref().expect("set above");
        let col = |name: &str| {
            names
                .iter()
                .position(|c| c == name)
                .and_then(|i| fields.get(i))
                .map(String::as_str)
        };
        let (Some(metric), Some(ts), Some(value)) = (
            col("metric_name"),
            col("timestamp").and_then(timestamp_us),
            col("metric_value").and_then(|v| v.parse::<f64>().ok()),
        ) else {
            malformed.add(n, || {
                "no metric_name, timestamp (integer, or RFC 3339) and numeric metric_value"
                    .to_string()
            });
            continue;
        };
        let at_us = ts;
        let tag = |name: &str| col(name).filter(|v| !v.is_empty());
        let tags = crate::k6_json::TagValues {
            name: tag("name"),
            url: tag("url"),
            method: tag("method"),
            status: tag("status"),
            group: tag("group"),
            scenario: tag("scenario"),
            error_code: tag("error_code"),
            error: tag("error"),
            expected_response: tag("expected_response"),
        };
        json_reader.point(builder, malformed, n, metric, at_us, value, &tags)?;
    }
    Ok(())
}

/// A timestamp of k6's CSV in µs: seconds, ms or µs since the epoch (`timeFormat` unix,
/// unix_milli, unix_micro), told apart by their size, or RFC 3339 (`rfc3339_nano`).
fn timestamp_us(t: &str) -> Option<i64> {
    match t.parse::<i64>() {
        Ok(t) if t < 100_000_000_000 => Some(t * 1_000_000),
        Ok(t) if t < 100_000_000_000_000 => Some(t * 1000),
        Ok(t) => Some(t),
        Err(_) => crate::time::rfc3339_us(t),
    }
}

#[cfg(test)]
mod timestamp_tests {
    #[test]
    fn every_time_format_of_k6_is_read() {
        let at = 1_765_090_023_002_124_i64; // 2025-12-07T06:47:03.002124Z
        for (text, want) in [
            ("1765090023", at / 1_000_000 * 1_000_000),
            ("1765090023002", at / 1000 * 1000),
            ("1765090023002124", at),
            ("2025-12-07T06:47:03.00212425Z", at),
        ] {
            assert_eq!(super::timestamp_us(text), Some(want), "{text}");
        }
        assert_eq!(super::timestamp_us("yesterday"), None);
    }
}
