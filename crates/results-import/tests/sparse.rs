//! A file of few requests over hours is sliced to its data, not written second by second
//! (10 samples 50 minutes apart wrote 27,000 empty intervals, 16 MB); a dense run followed by
//! hours of stray samples is refused at the sample after the pause.

use loadlab_record::{summarize, StoredRecord};
use loadlab_results_import::{import_file, Format, ImportError, Options};
use std::fmt::Write;

const S: u64 = 1_000_000_000;
const START: u64 = 1_765_000_000 * S;

/// vegeta's CSV (no header): unix ns, code, latency ns, bytes out, bytes in, error, body,
/// attack, seq, method, url, headers.
fn csv(starts_s: &[u64]) -> String {
    let mut text = String::new();
    for (i, s) in starts_s.iter().enumerate() {
        let latency = 1_500_000 + i as u64 * 1000;
        let _ = writeln!(
            text,
            "{},200,{latency},0,12,,,,{i},GET,http://127.0.0.1:1/x,",
            START + s * S
        );
    }
    text
}

fn import(text: &str) -> Result<(loadlab_metrics::RunResult, u32), ImportError> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.csv");
    std::fs::write(&file, text).unwrap();
    let run = dir.path().join("run");
    let options = Options {
        name: "t".into(),
        ..Options::default()
    };
    let imported = import_file(Format::VegetaCsv, &file, &run, &options)?;
    let r = summarize(&StoredRecord::open(&run).unwrap()).unwrap();
    Ok((r, imported.intervals))
}

#[test]
fn sparse_requests_get_longer_slices_with_exact_counts() {
    let starts: Vec<u64> = (0..10).map(|i| i * 50 * 60).collect();
    let (r, intervals) = import(&csv(&starts)).unwrap();
    assert_eq!(r.requests.total, 10);
    // 7.5 h in 60 s slices: 451 intervals, not 27,001.
    assert_eq!(intervals, 451);
    assert!(r.intervals.iter().all(|i| i.length_s <= 60.0 + 1e-9));
    assert!((r.duration_s - 27_000.0).abs() < 0.1, "{}", r.duration_s);
    // The samples are not averaged: the largest latency is the last sample's.
    assert!(
        (r.latency_ms.max - 1.509).abs() < 0.002,
        "{}",
        r.latency_ms.max
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("sliced in 60 s intervals")),
        "{:?}",
        r.notes
    );
}

#[test]
fn a_dense_run_stays_second_by_second() {
    let starts: Vec<u64> = (0..100).collect();
    let (r, intervals) = import(&csv(&starts)).unwrap();
    assert_eq!((r.requests.total, intervals), (100, 100));
    assert!(!r.notes.iter().any(|n| n.contains("sliced in")));
}

#[test]
fn stray_samples_after_a_dense_run_are_refused_at_the_pause() {
    // 70 busy seconds are sliced by the second; then three samples 50 minutes apart.
    let mut starts: Vec<u64> = (0..70).collect();
    starts.extend([3070, 6070, 9070]);
    let Err(ImportError::Format { message, .. }) = import(&csv(&starts)) else {
        panic!("refused")
    };
    assert!(
        message.starts_with("line 72: a sample at 2025-12-06T07:27:50.001Z, 0.8 h after the latest before it (by 2025-12-06T06:37:51.000Z), with none between; the run so far has 71 s holding samples and 3000 s without"),
        "{message}"
    );
}
