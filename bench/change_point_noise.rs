//! How often does the change-point detector report a change where there is none? Noise-only
//! series of 100 points through the real code path (`detect_change_points`), 1,000 series per
//! row, printed as a Markdown table that docs/history.md quotes.
//!
//! Rows: Otava's defaults (p 0.001, window 50) and the looser settings a user might pick, on
//! Gaussian noise (CV 5%) and on log-normal noise (CV 10%, the right skew of latency
//! percentiles), each drawn from a fixed seed so the table is reproducible. Run with
//! `bash bench/change-points.sh` (`SERIES=10000` for tighter figures).

use loadlab_analysis::change_points::{detect_change_points, ChangePointParams};
use loadlab_analysis::stats::SplitMix64;

const POINTS: usize = 100;

/// Draws one noise-only series.
type Draw = fn(&mut SplitMix64) -> Vec<f64>;

fn gaussian(rng: &mut SplitMix64) -> Vec<f64> {
    (0..POINTS)
        .map(|_| 100.0 * (1.0 + 0.05 * rng.normal()))
        .collect()
}

fn log_normal(rng: &mut SplitMix64) -> Vec<f64> {
    let sigma = (1.0f64 + 0.10 * 0.10).ln().sqrt();
    (0..POINTS)
        .map(|_| 100.0 * (sigma * rng.normal()).exp())
        .collect()
}

/// (share of series with at least one change point, change points per series)
fn false_changes(series_count: usize, params: &ChangePointParams, draw: Draw) -> (f64, f64) {
    let mut rng = SplitMix64(0x10AD_1AB0);
    let (mut with_any, mut total) = (0usize, 0usize);
    for _ in 0..series_count {
        let found = detect_change_points(&draw(&mut rng), params)
            .expect("finite noise and valid parameters")
            .change_points
            .len();
        with_any += usize::from(found > 0);
        total += found;
    }
    (
        with_any as f64 / series_count as f64,
        total as f64 / series_count as f64,
    )
}

fn main() {
    let series_count: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("SERIES is a count"))
        .unwrap_or(1000);
    let defaults = ChangePointParams::default();
    let settings = [
        ("p 0.001, window 50 (default)", defaults),
        (
            "p 0.001, window 20",
            ChangePointParams {
                window: 20,
                ..defaults
            },
        ),
        (
            "p 0.01, window 50",
            ChangePointParams {
                max_p_value: 0.01,
                ..defaults
            },
        ),
        (
            "p 0.001, window 50, min magnitude 5%",
            ChangePointParams {
                min_magnitude: 0.05,
                ..defaults
            },
        ),
    ];
    let noises: [(&str, Draw); 2] = [
        ("Gaussian, CV 5%", gaussian),
        ("log-normal, CV 10%", log_normal),
    ];
    println!("{series_count} noise-only series of {POINTS} points per row\n");
    println!(
        "| settings | noise | series with a false change point | false change points per series |"
    );
    println!("|---|---|---:|---:|");
    for (label, params) in &settings {
        for (noise, draw) in noises {
            let (share, per_series) = false_changes(series_count, params, draw);
            println!(
                "| {label} | {noise} | {:.1}% | {per_series:.3} |",
                share * 100.0
            );
        }
    }
}
