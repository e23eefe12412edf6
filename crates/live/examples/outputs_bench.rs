//! What each live output costs per interval, for 1, 10 and 50 steps (100 requests per step
//! and interval): building the snapshot on the coordinator's thread, then encoding and
//! sending on the output's own thread (json/csv to a file, prometheus-rw/otlp as an HTTP POST
//! to a loopback receiver that answers 204). Run by bench/outputs.sh.

use loadlab_live::outputs::http::Poster;
use loadlab_live::outputs::snapshot::{Snapshot, SnapshotBuilder};
use loadlab_live::outputs::{csv, encode_otlp, encode_prometheus, rows, snappy};
use loadlab_live::FrameBuilder;
use loadlab_metrics::IntervalDelta;
use loadlab_record::IntervalRecord;
use prost::Message;
use std::io::{BufRead, BufReader, Read, Write};
use std::time::Instant;

const INTERVALS: u32 = 200;

fn interval(index: u32, steps: usize) -> IntervalRecord {
    let mut delta = IntervalDelta::new(steps);
    for (s, step) in delta.steps.iter_mut().enumerate() {
        for i in 0..100u64 {
            step.requests += 1;
            step.latency.record(1000 + (i * 37 + s as u64 * 11) % 5000);
            step.service.record(800 + (i * 31) % 4000);
            step.lag.record((i * 13) % 300);
            step.add_status(if i % 20 == 0 { 503 } else { 200 }, 1);
        }
        step.failed = 5;
        step.errors[loadlab_metrics::ErrorKind::Http5xx.index()] = 5;
    }
    IntervalRecord {
        index,
        start_s: index as f64,
        length_s: 1.0,
        warmup: false,
        delta,
        resources: Vec::new(),
    }
}

/// A loopback HTTP receiver answering 204 to every request (keep-alive).
fn receiver() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/write", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in l.incoming().flatten() {
            std::thread::spawn(move || {
                let mut r = BufReader::new(stream.try_clone().unwrap());
                let mut w = stream;
                loop {
                    let mut len = 0usize;
                    loop {
                        let mut h = String::new();
                        if r.read_line(&mut h).unwrap_or(0) == 0 {
                            return;
                        }
                        let lower = h.to_ascii_lowercase();
                        if let Some(v) = lower.strip_prefix("content-length:") {
                            len = v.trim().parse().unwrap_or(0);
                        }
                        if h.trim().is_empty() {
                            break;
                        }
                    }
                    let mut body = vec![0; len];
                    if r.read_exact(&mut body).is_err() {
                        return;
                    }
                    let _ = w.write_all(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n");
                }
            });
        }
    });
    url
}

fn per_interval(f: impl FnMut(&Snapshot), snaps: &[Snapshot]) -> f64 {
    let mut f = f;
    let t = Instant::now();
    for s in snaps {
        f(s);
    }
    t.elapsed().as_secs_f64() * 1e6 / snaps.len() as f64
}

fn main() {
    let url = receiver();
    let prom = Poster::new(&url, vec![("Content-Encoding", "snappy")]);
    let otlp = Poster::new(&url, vec![]);
    let dir = std::env::temp_dir().join(format!("loadlab-outputs-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    println!("steps  snapshot_us  json_us  csv_us  prometheus_rw_us (encode)  otlp_us (encode)  prom_bytes  otlp_bytes");
    for steps in [1usize, 10, 50] {
        let names: Vec<String> = (0..steps).map(|i| format!("step{i}")).collect();
        let frames = FrameBuilder::from_parts(
            "bench",
            names.iter().map(|n| (n.clone(), None)).collect(),
            None,
            0.0,
        );
        let mut builder = SnapshotBuilder::from_parts(frames, "bench-1", 0, &names);
        let records: Vec<IntervalRecord> = (0..INTERVALS).map(|i| interval(i, steps)).collect();
        let t = Instant::now();
        let snaps: Vec<Snapshot> = records.iter().map(|r| builder.snapshot(r)).collect();
        let snapshot_us = t.elapsed().as_secs_f64() * 1e6 / INTERVALS as f64;
        let mut jf = std::io::BufWriter::new(std::fs::File::create(dir.join("b.jsonl")).unwrap());
        let json_us = per_interval(
            |s| {
                for row in rows::rows(s) {
                    serde_json::to_writer(&mut jf, &row).unwrap();
                    jf.write_all(b"\n").unwrap();
                }
                jf.flush().unwrap();
            },
            &snaps,
        );
        let mut cf = std::io::BufWriter::new(std::fs::File::create(dir.join("b.csv")).unwrap());
        let csv_us = per_interval(
            |s| {
                for row in rows::rows(s) {
                    writeln!(cf, "{}", csv::line(&row)).unwrap();
                }
                cf.flush().unwrap();
            },
            &snaps,
        );
        let prom_enc = per_interval(
            |s| drop(snappy(&encode_prometheus(s).encode_to_vec())),
            &snaps,
        );
        let prom_us = per_interval(
            |s| {
                prom.post(&snappy(&encode_prometheus(s).encode_to_vec()).unwrap())
                    .unwrap()
            },
            &snaps,
        );
        let otlp_enc = per_interval(|s| drop(encode_otlp(s).encode_to_vec()), &snaps);
        let otlp_us = per_interval(
            |s| otlp.post(&encode_otlp(s).encode_to_vec()).unwrap(),
            &snaps,
        );
        let last = snaps.last().unwrap();
        let prom_bytes = snappy(&encode_prometheus(last).encode_to_vec())
            .unwrap()
            .len();
        let otlp_bytes = encode_otlp(last).encode_to_vec().len();
        println!(
            "{steps:>5}  {snapshot_us:>11.1}  {json_us:>7.1}  {csv_us:>6.1}  {prom_us:>9.1} ({prom_enc:.1})  {otlp_us:>9.1} ({otlp_enc:.1})  {prom_bytes:>10}  {otlp_bytes:>10}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
