#!/usr/bin/env sh
# What each live output (--out) costs per interval, for 1, 10 and 50 steps: the snapshot built
# on the engine coordinator's thread, then encoding and sending on the output's own thread
# (json/csv into a file; prometheus-rw/otlp POSTed to a loopback receiver), in µs per
# interval. Encoding alone in brackets. See docs/live.md (Outputs, Cost).
set -eu
cd "$(dirname "$0")/.."
exec cargo run -q --release -p loadlab-live --example outputs_bench
