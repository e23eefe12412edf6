#!/usr/bin/env bash
# Short (1 s) open-model runs of two builds, interleaved, against `loadlab target`: valid runs
# and send-lag tails of each (bench/README.md "Short runs"). About 1 minute for 20 pairs.
#
#   A=/path/to/old/loadlab bash bench/short-runs.sh          # B defaults to this tree's build
#   PAIRS=40 RATE=200 DURATION=1 URL_PATH=/health A=... B=... bash bench/short-runs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${B:-}" ]; then
    cargo build --release --quiet
    B=target/release/loadlab
fi
: "${A:?set A to the loadlab binary to compare with}"
python3 bench/short_runs.py --a "$A" --b "$B" --pairs "${PAIRS:-20}" --rate "${RATE:-1000}" \
    --duration "${DURATION:-1}" --path "${URL_PATH:-/api/ping}" --out "${OUT:-bench/out-short-runs}"
