#!/usr/bin/env bash
# False-alarm rate and power of loadlab's regression gates (study vs study, one run vs a
# study), simulated through the real analysis code: bench/gate_simulation.rs. Prints a
# Markdown table; docs/studies.md quotes it. REPS (default 2000) replications per cell.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -p loadlab-analysis --example gate_simulation -- "${REPS:-2000}"
