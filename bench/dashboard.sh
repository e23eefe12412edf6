#!/usr/bin/env bash
# The live dashboard's cost to the generator: a run of DURATION at RATE against `loadlab
# target`, with `--dashboard` and one browser-like client reading `/events` (curl), prints
#  - the coordinator-side cost of the dashboard's observer (frame, thresholds so far, JSON,
#    fan-out to the clients), per interval, from `/api/state` (`cost`): the coordinator
#    thread's CPU time (CLOCK_THREAD_CPUTIME_ID) and wall time around each call;
#  - the CPU of the dashboard's own threads (accept loop, one per connection), from
#    /proc/PID/task/*/stat (utime + stime of the threads named `dashboard*`), read while the
#    dashboard lingers after the run, as % of one core over the run;
#  - the whole generator's CPU over the same time, for scale.
# Usage: bash bench/dashboard.sh   (DURATION=20s RATE=200/s; LOADLAB=path/to/loadlab)
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
DURATION="${DURATION:-20s}"
RATE="${RATE:-200/s}"
LOADLAB="${LOADLAB:-$ROOT/target/release/loadlab}"
OUT="$(mktemp -d)"
TPORT="${TPORT:-18191}"
DPORT="${DPORT:-18192}"
log() { printf '[dashboard] %s\n' "$*" >&2; }
[[ -x "$LOADLAB" ]] || (cd "$ROOT" && cargo build --release)

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$OUT"; }
trap cleanup EXIT

"$LOADLAB" target --listen "127.0.0.1:$TPORT" --service-time 2ms >/dev/null &
PIDS+=($!)
sleep 0.5

# Two steps and three thresholds (judged on the summary so far once a second).
cat >"$OUT/s.yaml" <<YAML
name: dashboard-cost
load: { model: open, rate: $RATE, duration: $DURATION }
thresholds: [ latency.p95 < 1s, errors.rate < 1%, step.items.latency.p99 < 2s ]
steps:
  - { name: ping, get: /api/ping }
  - { name: items, get: /api/items }
YAML
"$LOADLAB" run "$OUT/s.yaml" --target "http://127.0.0.1:$TPORT" \
  --no-progress --results "$OUT/results" \
  --dashboard "127.0.0.1:$DPORT" --dashboard-linger 5s >"$OUT/run.out" 2>"$OUT/run.err" &
RUN=$!
PIDS+=($RUN)
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$DPORT/api/state" && break; sleep 0.1; done
curl -sN "http://127.0.0.1:$DPORT/events" >"$OUT/events" &
PIDS+=($!)
CLK=$(getconf CLK_TCK)

# Wait for the end event (the run is over, the dashboard lingers).
for _ in $(seq 600); do
  grep -q '"type":"end"' "$OUT/events" 2>/dev/null && break
  sleep 0.1
done
STATE="$(curl -s "http://127.0.0.1:$DPORT/api/state")"
dash_ticks=0
for t in /proc/$RUN/task/*; do
  comm=$(cat "$t/comm" 2>/dev/null || true)
  if [[ "$comm" == dashboard* ]]; then
    read -r -a f < <(sed 's/^.*) //' "$t/stat")
    dash_ticks=$((dash_ticks + f[11] + f[12]))
  fi
done
read -r -a p < <(sed 's/^.*) //' "/proc/$RUN/stat")
proc_ticks=$((p[11] + p[12]))
wait "$RUN" || true

python3 - "$STATE" "$dash_ticks" "$proc_ticks" "$CLK" "$DURATION" "$OUT/events" <<'PY'
import json, sys
state = json.loads(sys.argv[1])
dash_ticks, proc_ticks, clk = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
d = sys.argv[5]
secs = float(d[:-1]) * (60 if d.endswith("m") else 1)
cost = state["cost"]
frames = sum(1 for l in open(sys.argv[6]) if l.startswith("data: {\"type\":\"frame\""))
calls = cost["coordinator_calls"]
us = cost["coordinator_us"]
cpu_us = cost["coordinator_cpu_us"]
print(f"run: {d}, {state['last_frame']['frame']['total_requests']} requests, {frames} frames streamed to 1 client")
print(f"coordinator (observer: frame + thresholds + JSON + fan-out), {calls} calls:"
      f" CPU {cpu_us} us = {cpu_us / max(calls, 1):.0f} us per call = {100 * cpu_us / 1e6 / secs:.3f}% of a core;"
      f" wall {us} us = {us / max(calls, 1):.0f} us per call (includes preemption)")
print(f"dashboard threads (server, SSE connection): {dash_ticks / clk:.2f} s CPU"
      f" = {100 * dash_ticks / clk / secs:.3f}% of a core (clock tick {1000 / clk:.0f} ms)")
print(f"whole generator process: {proc_ticks / clk:.2f} s CPU = {100 * proc_ticks / clk / secs:.1f}% of a core")
total = 100 * (cpu_us / 1e6 + dash_ticks / clk) / secs
print(f"dashboard total: {total:.3f}% of a core (budget: < 1%)")
PY
