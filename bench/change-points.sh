#!/usr/bin/env bash
# False change-point rate of `loadlab history` on noise-only series: bench/change_point_noise.rs
# through the real detector. Prints a Markdown table; docs/history.md quotes it. SERIES
# (default 1000) noise series of 100 points per row. bench/change_point_noise_otava.py measures
# Otava's own rate the same way, for comparison.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -p loadlab-analysis --example change_point_noise -- "${SERIES:-1000}"
