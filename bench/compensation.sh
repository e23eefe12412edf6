#!/usr/bin/env bash
# What compensated closed-model latency costs (issue 39). The hot path records nothing more
# (the correction is computed from the raw histogram when a run is summarized), so the cost
# is the summary's: one correction per scope (run, steps, groups, tags). This prints the time
# to correct one scope's histogram for runs that can happen, from the cheap (a paced run) to
# the costly (a fast service with minute-long stalls and an inferred 0.3 ms schedule), then
# the same closed run end to end with and without `pace` (CPU per request, medians of 3).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
cargo run --release -q -p loadlab-metrics --example compensation_cost
BIN=target/release/loadlab
PORT=$((20000 + RANDOM % 10000))
$BIN target --listen 127.0.0.1:$PORT >/dev/null 2>&1 &
TARGET=$!
trap 'kill $TARGET 2>/dev/null' EXIT
sleep 0.5
DIR=$(mktemp -d)
echo
echo "| closed run, 20 VUs, 5 s against /api/ping | requests | CPU per request (median of 3) | compensation |"
echo "|---|---:|---:|---|"
for pace in "" ", pace: 2ms"; do
  printf 'target: http://127.0.0.1:%s\nload: { model: closed, vus: 20, duration: 5s%s }\nsteps: [ { get: /api/ping } ]\n' \
    "$PORT" "$pace" > "$DIR/s.yaml"
  rows=()
  for i in 1 2 3; do
    /usr/bin/time -f "%U %S" -o "$DIR/time" $BIN run "$DIR/s.yaml" --quiet --allow-saturated \
      --json "$DIR/r.json" --results "$DIR/results" || true
    read -r user sys < "$DIR/time"
    rows+=("$(python3 -c "
import json,sys
r=json.load(open('$DIR/r.json'))
n=r['requests']['total']
c=r.get('compensation') or {}
print(f\"{($user+$sys)/n*1e6:.2f} {n} {c.get('source','-')}:{c.get('interval_ms',0):.2f}ms\")")")
  done
  median=$(printf '%s\n' "${rows[@]}" | sort -n | sed -n 2p)
  read -r cpu n source <<<"$median"
  label=${pace#, }
  echo "| ${label:-no pace} | $n | $cpu µs | $source |"
done
rm -rf "$DIR"
