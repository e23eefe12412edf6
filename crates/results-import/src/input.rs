//! Opening a results file: gzip-compressed output (k6 `--out json=results.gz`, or any file
//! compressed after the run) is read through `flate2`, told by its magic bytes rather than its
//! name; and a binary file given as a text format is refused at once, saying what it is and
//! how to turn it into a format loadlab reads (vegeta's default `.bin`, Gatling 3.12's log).

use crate::Format;
use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// How many bytes the sniffing looks at.
const SNIFF: usize = 4096;

/// `file`, decompressed when it is gzip, buffered.
pub(crate) fn open(file: &Path) -> std::io::Result<BufReader<Box<dyn Read>>> {
    let mut f = File::open(file)?;
    let mut magic = [0u8; 2];
    let n = read_up_to(&mut f, &mut magic)?;
    f.seek(SeekFrom::Start(0))?;
    let inner: Box<dyn Read> = if n == 2 && magic == [0x1f, 0x8b] {
        Box::new(MultiGzDecoder::new(f))
    } else {
        Box::new(f)
    };
    Ok(BufReader::with_capacity(1 << 20, inner))
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Why `file` cannot be `format`, when its first bytes show it is binary (and no gzip): the
/// text formats never hold a NUL byte.
pub(crate) fn binary_refusal(format: Format, file: &Path) -> std::io::Result<Option<String>> {
    if format == Format::OhaSqlite {
        return Ok(None);
    }
    let mut head = Vec::with_capacity(SNIFF);
    open(file)?.take(SNIFF as u64).read_to_end(&mut head)?;
    if !head.contains(&0) {
        return Ok(None);
    }
    let fix = match format {
        Format::VegetaJson | Format::VegetaCsv => {
            "vegeta's default output (`vegeta attack > results.bin`) is binary: turn it into JSON with `vegeta encode --to json results.bin > results.json` and import that"
        }
        Format::GatlingLog => {
            "Gatling 3.12 and later write a binary simulation.log that only Gatling reads; loadlab reads the text log of Gatling 3.0-3.11"
        }
        Format::K6Json | Format::K6Csv => {
            "k6 writes text (`--out json=results.json`, `--out csv=results.csv`; a .gz is read too)"
        }
        _ => "JMeter writes text results (`-l results.jtl`, CSV or XML)",
    };
    Ok(Some(format!(
        "a binary file, not {} results: {fix}",
        format.as_str()
    )))
}

/// What `file` looks like when it gave no request as `format`: another format's first line.
pub(crate) fn hint(format: Format, file: &Path) -> Option<String> {
    let line = first_line(file)?;
    let json_object = line.starts_with('{');
    let hint = match format {
        Format::K6Json if json_object && !line.contains("\"type\"") => {
            "it looks like k6's end-of-test summary (--summary-export, handleSummary): counts and a few percentiles, no request; run k6 with --out json=results.json and import that"
        }
        Format::K6Json if line.starts_with("metric_name,") => "it is k6's CSV output: import it as k6-csv",
        // Only a line of that output: a summary's `{` alone is not one.
        Format::K6Csv if json_object && line.contains("\"metric\"") => {
            "it is k6's JSON output: import it as k6-json"
        }
        Format::VegetaCsv if json_object && line.contains("\"latency\"") => {
            "it is vegeta's JSON: import it as vegeta-json"
        }
        Format::VegetaJson if line.starts_with(|c: char| c.is_ascii_digit()) => {
            "it is vegeta's CSV: import it as vegeta-csv"
        }
        Format::VegetaJson | Format::VegetaCsv if vegeta_report(&line) => {
            "it is a vegeta report (`vegeta report`): counts and a few percentiles, no request; import the results themselves: `vegeta encode --to json results.bin > results.json`"
        }
        _ => return None,
    };
    Some(hint.to_string())
}

/// Whether `line` opens one of `vegeta report`'s outputs (JSON, text, hdrplot, hist).
fn vegeta_report(line: &str) -> bool {
    ["{\"latencies\":", "Requests ", "Value(ms) ", "Bucket "]
        .iter()
        .any(|p| line.starts_with(p))
}

/// The first non-blank line of a text file, for the hints above.
fn first_line(file: &Path) -> Option<String> {
    let mut r = open(file).ok()?;
    let mut line = String::new();
    for _ in 0..32 {
        line.clear();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if !line.trim().is_empty() {
            return Some(line.trim().chars().take(200).collect());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn gzip_is_read_through_and_binary_is_refused_with_its_fix() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain.json");
        std::fs::write(&plain, "{\"a\":1}\n").unwrap();
        let gz = dir.path().join("results.json.gz");
        let mut enc =
            flate2::write::GzEncoder::new(File::create(&gz).unwrap(), flate2::Compression::fast());
        enc.write_all(b"{\"a\":1}\n").unwrap();
        enc.finish().unwrap();
        for f in [&plain, &gz] {
            let mut text = String::new();
            open(f).unwrap().read_to_string(&mut text).unwrap();
            assert_eq!(text, "{\"a\":1}\n", "{}", f.display());
            assert_eq!(binary_refusal(Format::K6Json, f).unwrap(), None);
        }
        let bin = dir.path().join("results.bin");
        std::fs::write(
            &bin,
            b"\x1c\xff\x81\x03\x01\x01\x06Result\x01\xff\x82\x00\x01",
        )
        .unwrap();
        let why = binary_refusal(Format::VegetaJson, &bin).unwrap().unwrap();
        assert!(why.contains("vegeta encode --to json"), "{why}");
    }

    #[test]
    fn another_formats_first_line_gives_a_hint() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (
                Format::K6Json,
                "{\n  \"metrics\": {",
                Some("end-of-test summary"),
            ),
            (Format::K6Json, "{\"type\":\"Metric\",\"data\":{}}", None),
            (
                Format::K6Json,
                "metric_name,timestamp,metric_value",
                Some("k6-csv"),
            ),
            (
                Format::K6Csv,
                "{\"metric\":\"vus\",\"type\":\"Point\"}",
                Some("k6-json"),
            ),
            (
                Format::VegetaCsv,
                "{\"attack\":\"\",\"latency\":761622}",
                Some("vegeta-json"),
            ),
            (Format::VegetaCsv, "{\n  \"metrics\": {", None),
            (
                Format::VegetaJson,
                "1700000000000000000,200,1000",
                Some("vegeta-csv"),
            ),
            (
                Format::VegetaJson,
                "{\"latencies\":{\"total\":565678268,\"mean\":1885594}}",
                Some("vegeta report"),
            ),
            (
                Format::VegetaCsv,
                "Requests      [total, rate, throughput]         300, 150.50, 38.57",
                Some("vegeta encode --to json"),
            ),
        ];
        for (i, (format, text, want)) in cases.into_iter().enumerate() {
            let f = dir.path().join(format!("f{i}"));
            std::fs::write(&f, text).unwrap();
            let got = hint(format, &f);
            match want {
                Some(w) => assert!(
                    got.as_deref().is_some_and(|g| g.contains(w)),
                    "{text}: {got:?}"
                ),
                None => assert_eq!(got, None, "{text}"),
            }
        }
    }
}
