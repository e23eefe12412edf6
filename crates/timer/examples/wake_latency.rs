//! Prints this host's timer wake-up lateness for sleeps of several lengths (bench/validity.sh
//! quotes it): `cargo run --release -p loadlab-timer --example wake_latency`.

use loadlab_timer::resolution::measure_wake_latency;
use std::time::Duration;

fn main() {
    println!("sleep_us samples p50_us p90_us p99_us max_us");
    for sleep_us in [200u64, 500, 1_000, 2_500, 5_000, 10_000, 20_000] {
        let n = (400_000 / sleep_us).clamp(40, 1000) as usize;
        let sleeps = vec![Duration::from_micros(sleep_us); n];
        let w = measure_wake_latency(&sleeps).expect("a timerfd");
        let us = |q: f64| w.quantile(q).as_micros();
        println!(
            "{sleep_us} {n} {} {} {} {}",
            us(0.5),
            us(0.9),
            us(0.99),
            us(1.0)
        );
    }
}
