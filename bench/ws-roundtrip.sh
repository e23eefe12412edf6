#!/usr/bin/env bash
# WebSocket message round trips per generator CPU second: loadlab (closed model, CONNS VUs,
# sessions of ROUND_TRIPS send/expect pairs on /ws/echo) next to two peers doing the same:
# a Go client on github.com/coder/websocket (bench/ws_go_client, built here from the Go
# module proxy) and a Python `websockets` client loop (bench/ws_client.py) — k6 is AGPL and
# not used here — all against `loadlab target` pinned to another CPU. Prints the rates and
# loadlab's ratio to each.
# Usage: bash bench/ws-roundtrip.sh      (REPS=3 DURATION=10 CONNS=20 ROUND_TRIPS=50)
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
OUT="$BENCH_DIR/out/ws"
REPS="${REPS:-3}"
DURATION="${DURATION:-10}"
CONNS="${CONNS:-20}"
ROUND_TRIPS="${ROUND_TRIPS:-50}"
PORT="${PORT:-18093}"
TARGET_CPU="${TARGET_CPU:-0}"
GEN_CPU="${GEN_CPU:-1}"
LOADLAB="${LOADLAB:-$ROOT/target/release/loadlab}"
PY="${PYTHON:-python3}"
URL="http://127.0.0.1:$PORT"
export LOADLAB_RESULTS="$OUT/results"

log() { printf '[ws] %s\n' "$*" >&2; }
mkdir -p "$OUT"
[[ -x "$LOADLAB" ]] || (cd "$ROOT" && cargo build --release)
"$PY" -c "import websockets" 2>/dev/null || "$PY" -m pip install --quiet -r "$ROOT/scripts/requirements-ws.txt"
(cd "$BENCH_DIR/ws_go_client" && go build -o "$OUT/ws_go_client" .)

TARGET_PID=""
stop_target() { [[ -n "$TARGET_PID" ]] && kill "$TARGET_PID" 2>/dev/null && wait "$TARGET_PID" 2>/dev/null || true; TARGET_PID=""; }
trap stop_target EXIT
taskset -c "$TARGET_CPU" "$LOADLAB" target --listen "127.0.0.1:$PORT" --threads 1 >"$OUT/target.log" 2>&1 &
TARGET_PID=$!
for _ in $(seq 50); do curl -fs "$URL/health" >/dev/null 2>&1 && break; sleep 0.1; done

{
    printf 'name: bench ws round trips\ntarget: %s\n' "$URL"
    printf 'load: { model: closed, vus: %s, duration: %ss }\n' "$CONNS" "$DURATION"
    printf 'steps:\n  - name: echo\n    ws:\n      url: /ws/echo\n      steps:\n'
    for ((i = 0; i < ROUND_TRIPS; i++)); do
        printf "        - send: '{\"n\": %d}'\n        - expect: {}\n" "$i"
    done
} >"$OUT/ws.yaml"

printf '| run | loadlab round trips/CPU s | Go coder/websocket | ratio | Python websockets | ratio |\n|---|---|---|---|---|---|\n'
for ((rep = 1; rep <= REPS; rep++)); do
    taskset -c "$GEN_CPU" "$LOADLAB" run "$OUT/ws.yaml" --no-progress --quiet --json "$OUT/run.json" >/dev/null || true
    ours=$("$PY" -c "
import json; r = json.load(open('$OUT/run.json'))
trips = sum(s['requests'] for s in r['steps'] if '› expect' in s['name'])
print(trips / max(r['generator']['cpu_seconds'], 1e-9))")
    read -r trips cpu < <(taskset -c "$GEN_CPU" "$OUT/ws_go_client" "ws://127.0.0.1:$PORT/ws/echo" "$CONNS" "$ROUND_TRIPS" "$DURATION")
    go_rate=$("$PY" -c "print($trips / max($cpu, 1e-9))")
    read -r trips cpu < <(taskset -c "$GEN_CPU" "$PY" "$BENCH_DIR/ws_client.py" "ws://127.0.0.1:$PORT/ws/echo" "$CONNS" "$ROUND_TRIPS" "$DURATION")
    py_rate=$("$PY" -c "print($trips / max($cpu, 1e-9))")
    ratio() { "$PY" -c "print(round($ours / max($1, 1e-9), 2))"; }
    printf '| %d | %.0f | %.0f | %s× | %.0f | %s× |\n' "$rep" "$ours" "$go_rate" "$(ratio "$go_rate")" "$py_rate" "$(ratio "$py_rate")"
done
