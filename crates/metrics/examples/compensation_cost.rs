//! What compensating a closed model's latency for coordinated omission costs when a run is
//! summarized (the only place it costs anything: the hot path records nothing more). Prints
//! the time to correct one scope's histogram for a typical run and for the worst cases: long
//! stalls against a short schedule. `bash bench/compensation.sh` runs it (release build).

use loadlab_metrics::compensation::compensate;
use loadlab_metrics::{new_histogram, record_us, LatencyHistogram};
use std::time::Instant;

/// A histogram of `fast` latencies of about `fast_us`, and `stalled` ones spread evenly up to
/// `stall_us` (each in a bucket of its own: the costly case).
fn histogram(fast: u64, fast_us: u64, stalled: u64, stall_us: u64) -> LatencyHistogram {
    let mut h = new_histogram();
    for i in 0..fast {
        record_us(&mut h, fast_us + i % 1000);
    }
    for i in 0..stalled {
        record_us(&mut h, fast_us + (stall_us - fast_us) * (i + 1) / stalled);
    }
    h
}

fn main() {
    // The work is one record per back-filled value per histogram bucket: at most the run's
    // summed latency over the interval, which a closed model bounds by VUs × duration /
    // interval (about the iterations its schedule planned). The cases are runs that can be.
    let cases = [
        (
            "10 VUs paced at 100 ms for 10 min, a 1 s stall every 5 s (1,200 stalled)",
            48_000,
            2_000,
            1_200,
            1_000_000,
            100_000,
        ),
        (
            "50 VUs, 10 min, ~2 ms, 10 stalls of up to 1 s (500 stalled), inferred 2 ms",
            1_000_000,
            2_000,
            500,
            1_000_000,
            2_000,
        ),
        (
            "100 VUs, 10 min, ~0.3 ms, 10 stalls of up to 60 s (1,000 stalled), inferred 0.3 ms",
            1_000_000,
            300,
            1_000,
            60_000_000,
            300,
        ),
    ];
    println!("| run (one scope's histogram) | schedule interval | values after | time to correct (median of 5) |");
    println!("|---|---:|---:|---:|");
    for (name, fast, fast_us, stalled, stall_us, interval) in cases {
        let h = histogram(fast, fast_us, stalled, stall_us);
        let mut times = Vec::new();
        let mut len = 0;
        for _ in 0..5 {
            let t = Instant::now();
            let c = compensate(&h, interval);
            times.push(t.elapsed().as_secs_f64() * 1e3);
            len = c.len();
        }
        times.sort_by(f64::total_cmp);
        println!("| {name} | {interval} µs | {len} | {:.1} ms |", times[2]);
    }
}
