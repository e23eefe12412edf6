//! k6 `--out csv=FILE`: a header, then one sample a line: `metric_name`, `timestamp` (Unix
//! seconds by default; ms or µs with `timeFormat`), `metric_value` (ms for times) and the
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
            col("timestamp").and_then(|t| t.parse::<i64>().ok()),
            col("metric_value").and_then(|v| v.parse::<f64>().ok()),
        ) else {
            malformed.add(n, || {
                "no metric_name, integer timestamp and numeric metric_value".to_string()
            });
            continue;
        };
        // Seconds, ms or µs since the epoch, told apart by their size.
        let at_us = match ts {
            t if t < 100_000_000_000 => t * 1_000_000,
            t if t < 100_000_000_000_000 => t * 1000,
            t => t,
        };
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
