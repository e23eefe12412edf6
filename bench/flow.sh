#!/usr/bin/env bash
# Scenario-flow benchmark: CPU per request of a 3-step templated flow (JSON body template,
# JSONPath capture, captured token in a header) next to wrk on a single URL, both against
# `loadlab target` in the same run; and RSS per idle VU at 10,000 VUs (think 60 s).
# Usage: bash bench/flow.sh        (REPS=3 DURATION=10 CONNS=50 IDLE_VUS=10000)
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
OUT="$BENCH_DIR/out/flow"
REPS="${REPS:-3}"
DURATION="${DURATION:-10}"
CONNS="${CONNS:-50}"
IDLE_VUS="${IDLE_VUS:-10000}"
PORT="${PORT:-18090}"
TARGET_CPU="${TARGET_CPU:-0}"
GEN_CPU="${GEN_CPU:-1}"
LOADLAB="${LOADLAB:-$ROOT/target/release/loadlab}"
URL="http://127.0.0.1:$PORT"
export LOADLAB_RESULTS="$OUT/results"

log() { printf '[flow] %s\n' "$*" >&2; }
mkdir -p "$OUT"
[[ -x "$LOADLAB" ]] || (cd "$ROOT" && cargo build --release)
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

TARGET_PID=""
stop_target() { [[ -n "$TARGET_PID" ]] && kill "$TARGET_PID" 2>/dev/null && wait "$TARGET_PID" 2>/dev/null || true; TARGET_PID=""; }
trap stop_target EXIT
start_target() {
    taskset -c "$TARGET_CPU" "$LOADLAB" target --listen "127.0.0.1:$PORT" --threads 1 >"$OUT/target.log" 2>&1 &
    TARGET_PID=$!
    for _ in $(seq 50); do curl -fs "$URL/health" >/dev/null 2>&1 && return 0; sleep 0.1; done
    log "target did not start"; exit 1
}

cat >"$OUT/flow.yaml" <<YAML
name: bench 3-step flow
target: $URL
load: { model: closed, vus: $CONNS, duration: ${DURATION}s }
steps:
  - name: signin
    post: /api/auth/signin
    json: { username: "user{{ vu }}", password: password, attempt: "{{ iteration }}" }
    capture: { token: \$.token }
  - name: patient
    get: "/api/patients/{{ random_int(1, 1000) }}"
    headers: { Authorization: "Bearer {{ token }}" }
  - { name: ping, get: /api/ping }
YAML

cat >"$OUT/idle.yaml" <<YAML
name: bench idle VUs
target: $URL
load: { model: closed, vus: @VUS@, duration: 14s }
steps:
  - { get: /api/ping }
  - think: 60s
YAML

cpu_us() { # /usr/bin/time -f '%U %S' output file -> CPU seconds
    awk 'END { print $1 + $2 }' "$1"
}

start_target
results="$OUT/results.txt"; : >"$results"
for rep in $(seq "$REPS"); do
    # wrk on one URL
    /usr/bin/time -f '%U %S' -o "$OUT/wrk-$rep.time" taskset -c "$GEN_CPU" \
        wrk -t1 -c"$CONNS" -d"${DURATION}s" "$URL/api/ping" >"$OUT/wrk-$rep.out"
    wrk_reqs=$(awk '/requests in/ { print $1 }' "$OUT/wrk-$rep.out")
    wrk_cpu=$(cpu_us "$OUT/wrk-$rep.time")
    sleep 1
    # loadlab, the 3-step flow
    /usr/bin/time -f '%U %S' -o "$OUT/flow-$rep.time" taskset -c "$GEN_CPU" \
        "$LOADLAB" run "$OUT/flow.yaml" --threads 1 --quiet --allow-saturated --json "$OUT/flow-$rep.json" || true
    flow_reqs=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['requests']['total'] + r['requests']['warmup'])" "$OUT/flow-$rep.json")
    flow_failed=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['requests']['failed'])" "$OUT/flow-$rep.json")
    flow_cpu=$(cpu_us "$OUT/flow-$rep.time")
    python3 - "$rep" "$wrk_reqs" "$wrk_cpu" "$flow_reqs" "$flow_cpu" "$flow_failed" >>"$results" <<'PY'
import sys
rep, wr, wc, fr, fc, ff = sys.argv[1:]
w = float(wc) * 1e6 / float(wr); f = float(fc) * 1e6 / float(fr)
print(f"rep {rep}: wrk {int(wr)} req {w:.2f} us/req | loadlab flow {int(fr)} req ({ff} failed) {f:.2f} us/req | ratio {f / w:.2f}")
PY
    tail -1 "$results" >&2
    sleep 1
done
python3 - "$results" <<'PY' | tee -a "$results" >&2
import re, statistics, sys
ratios = [float(m) for m in re.findall(r"ratio ([0-9.]+)", open(sys.argv[1]).read())]
print(f"median ratio loadlab-flow / wrk CPU us/req: {statistics.median(ratios):.2f} over {len(ratios)} reps")
PY

# RSS per idle VU: 1 VU vs IDLE_VUS VUs, VmRSS at ~10 s.
rss_at() { # vus -> KiB
    sed "s/@VUS@/$1/" "$OUT/idle.yaml" >"$OUT/idle-$1.yaml"
    "$LOADLAB" run "$OUT/idle-$1.yaml" --quiet --allow-saturated --threads 1 >/dev/null 2>&1 &
    local pid=$! rss
    sleep 10
    rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
    wait "$pid" || true
    echo "$rss"
}
stop_target; start_target
base=$(rss_at 1)
many=$(rss_at "$IDLE_VUS")
python3 - "$base" "$many" "$IDLE_VUS" <<'PY' | tee -a "$results" >&2
import sys
b, m, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
print(f"RSS: 1 VU {b} KiB, {n} idle VUs {m} KiB -> {(m - b) / n:.2f} KiB per VU")
PY
