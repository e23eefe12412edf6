//! An imported file is an ordinary run record: read back by the record reader and summarised
//! by the one summary function, with its requests in the seconds they ended, empty seconds
//! kept as measured time, and requests out of time order still counted.

use loadlab_record::{summarize, StoredRecord};
use loadlab_results_import::{import_file, Format, Options};
use std::fmt::Write;
use std::path::Path;

fn vegeta_line(out: &mut String, start_ns: u64, latency_ns: u64, code: u16, error: &str) {
    let secs = start_ns / 1_000_000_000;
    let nanos = start_ns % 1_000_000_000;
    let _ = writeln!(
        out,
        "{{\"attack\":\"\",\"seq\":0,\"code\":{code},\"timestamp\":\"1970-01-01T00:{:02}:{:02}.{nanos:09}Z\",\"latency\":{latency_ns},\"bytes_out\":0,\"bytes_in\":4,\"error\":\"{error}\",\"body\":null,\"method\":\"GET\",\"url\":\"http://127.0.0.1/x\",\"headers\":null}}",
        secs / 60,
        secs % 60
    );
}

fn import(dir: &Path, text: &str) -> loadlab_metrics::RunResult {
    let file = dir.join("in.json");
    std::fs::write(&file, text).unwrap();
    let run = dir.join("run");
    let options = Options {
        name: "t".into(),
        ..Options::default()
    };
    import_file(Format::VegetaJson, &file, &run, &options).unwrap();
    summarize(&StoredRecord::open(&run).unwrap()).unwrap()
}

#[test]
fn requests_fall_in_the_second_they_ended_and_empty_seconds_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    // Sent at 0.0 s, 0.5 s (ends at 1.2 s), then nothing until 3.1 s.
    vegeta_line(&mut text, 1_000_000_000, 1_000_000, 200, "");
    vegeta_line(&mut text, 1_500_000_000, 700_000_000, 200, "");
    vegeta_line(
        &mut text,
        4_100_000_000,
        2_000_000,
        500,
        "500 Internal Server Error",
    );
    vegeta_line(
        &mut text,
        4_200_000_000,
        0,
        0,
        "dial tcp: connect: connection refused",
    );
    let r = import(dir.path(), &text);
    assert_eq!(r.requests.total, 4);
    assert_eq!(r.requests.failed, 2);
    assert_eq!(r.errors.get("http_5xx"), Some(&1));
    assert_eq!(r.errors.get("connect_refused"), Some(&1));
    let counts: Vec<u64> = r.intervals.iter().map(|i| i.requests).collect();
    assert_eq!(counts, vec![1, 1, 0, 2], "{:?}", r.intervals);
    assert!(!r.valid && r.imported.is_some() && r.validity.is_valid());
    assert!(
        (r.latency_ms.max - 700.0).abs() < 1.0,
        "{}",
        r.latency_ms.max
    );
    // The last interval lasts until the last request ended (3.2 s after the start).
    assert!((r.duration_s - 3.2).abs() < 0.01, "{}", r.duration_s);
}

#[test]
fn requests_far_out_of_order_are_counted_and_noted() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    // More seconds than the builder holds before it writes (it keeps the first 64 slices
    // holding requests to choose the slice length, and places a late one exactly there).
    for s in 0..80u64 {
        vegeta_line(&mut text, (10 + s) * 1_000_000_000, 1_000_000, 200, "");
    }
    // Ended 1 s into the run, written after 80 s of others.
    vegeta_line(&mut text, 11_000_000_000, 1_000_000, 200, "");
    let r = import(dir.path(), &text);
    assert_eq!(r.requests.total, 81);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("1 request(s) came more than 5 s out of time order")),
        "{:?}",
        r.notes
    );
}
