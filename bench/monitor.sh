#!/usr/bin/env bash
# The monitor's own cost (issue 10: under 1% of a core at a 1 s interval): CPU time of its
# sampling and scraping threads while it samples the host, two processes (one by pid, one by
# listening port) and one Prometheus endpoint (the built-in target's /metrics).
# Prints each run and the median, in percent of one core.
#
#   bash bench/monitor.sh                  # 5 runs of 20 s
#   RUNS=9 SECONDS_PER_RUN=30 bash bench/monitor.sh
#   INTERVAL=250ms bash bench/monitor.sh   # the cost grows as the interval shrinks
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-5}"
SECONDS_PER_RUN="${SECONDS_PER_RUN:-20}"
INTERVAL="${INTERVAL:-1s}"
cargo build --release -q -p loadlab-monitor --example monitor_cost
target/release/examples/monitor_cost --runs "$RUNS" --seconds "$SECONDS_PER_RUN" --interval "$INTERVAL"
