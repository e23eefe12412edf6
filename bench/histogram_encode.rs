//! What encoding one histogram for the run record costs: HdrHistogram's `V2DeflateSerializer`
//! made afresh per histogram (as the record did until 2026-12-07) next to one kept
//! `HistogramEncoder` (result/encoder.rs), for three shapes of a 100 ms interval. Prints µs
//! per histogram (mean of 2,000) and checks that both give the same bytes.
//! `cargo run --release -p loadlab-metrics --example histogram_encode`.

use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use loadlab_metrics::result::HistogramEncoder;
use loadlab_metrics::{new_histogram, record_us, LatencyHistogram};
use std::time::Instant;

const REPS: u32 = 2_000;

fn shape(values: u64, spread_us: u64) -> LatencyHistogram {
    let mut h = new_histogram();
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    for _ in 0..values {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        record_us(&mut h, 100 + x % spread_us);
    }
    h
}

fn main() {
    let shapes = [
        ("20 values up to 1 ms", shape(20, 1_000)),
        ("500 values up to 3 ms (5,000/s)", shape(500, 3_000)),
        ("5,000 values up to 20 ms", shape(5_000, 20_000)),
    ];
    println!("| histogram | serializer made per histogram (µs) | kept encoder (µs) | bytes |");
    println!("|---|---:|---:|---:|");
    let mut encoder = HistogramEncoder::new();
    for (name, h) in &shapes {
        let mut fresh = Vec::new();
        let start = Instant::now();
        for _ in 0..REPS {
            fresh.clear();
            V2DeflateSerializer::new().serialize(h, &mut fresh).unwrap();
        }
        let per_fresh = start.elapsed().as_secs_f64() * 1e6 / f64::from(REPS);
        let start = Instant::now();
        for _ in 0..REPS {
            std::hint::black_box(encoder.encode_bytes(h));
        }
        let per_kept = start.elapsed().as_secs_f64() * 1e6 / f64::from(REPS);
        assert_eq!(
            encoder.encode_bytes(h),
            fresh.as_slice(),
            "{name}: same bytes"
        );
        println!(
            "| {name} | {per_fresh:.1} | {per_kept:.1} | {} |",
            fresh.len()
        );
    }
}
