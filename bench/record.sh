#!/usr/bin/env bash
# What streaming the run record costs the generator, and what it writes to disk.
#
#  1. Instructions per request (valgrind callgrind: exact, repeatable whatever else the
#     machine is doing) of today's binary and of a baseline built from BASE_REV (the commit
#     before the run record existed), on the same closed-model run against `loadlab target`:
#     the marginal count (N2 − N1 requests) cancels start-up and shut-down.
#  2. Bytes the record writes per interval, per step (hlog) and per interval (counters), from a
#     real run, and what a 1-hour run would write for 1 and 10 steps.
#
# Usage: bash bench/record.sh          (REQS1=2000 REQS2=12000 BASE_REV=27302e9)
# The wall-clock CPU comparison against wrk and the 60 s RSS run are bench/run.sh's
# (GENERATORS="wrk loadlab base" LOADLAB_BASE=... LONG=1 bash bench/run.sh).
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
OUT="$BENCH_DIR/out/record"
BASE_REV="${BASE_REV:-27302e9}"
REQS1="${REQS1:-2000}"
REQS2="${REQS2:-12000}"
VUS="${VUS:-4}"
PORT="${PORT:-18095}"
LOADLAB="$ROOT/target/release/loadlab"
BASE_DIR="${BASE_DIR:-/tmp/loadlab-base-$BASE_REV}"
BASE="$BASE_DIR/target/release/loadlab"

log() { printf '[record-bench] %s\n' "$*" >&2; }

command -v valgrind >/dev/null || { log "installing valgrind"; apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null; }
rm -rf "$OUT"; mkdir -p "$OUT"
(cd "$ROOT" && cargo build --release -q)
if [[ ! -x "$BASE" ]]; then
    log "building the baseline $BASE_REV in $BASE_DIR (once)"
    rm -rf "$BASE_DIR"
    git -C "$ROOT" worktree add -f -q --detach "$BASE_DIR" "$BASE_REV"
    (cd "$BASE_DIR" && cargo build --release -q)
fi

"$LOADLAB" target --listen "127.0.0.1:$PORT" --threads 1 >"$OUT/target.log" 2>&1 &
TARGET_PID=$!
trap 'kill $TARGET_PID 2>/dev/null || true' EXIT
sleep 0.5

# Instructions of one run of `bin` with `n` requests (closed model, one worker thread).
instructions() {
    local bin="$1" n="$2" tag="$3"
    local file="$OUT/callgrind.$tag.$n"
    # The resource monitor stays off: it reads the process's auxiliary vector (rustix), which
    # crashes under valgrind, and its cost is bench/monitor.sh's.
    local scenario="$OUT/$tag.$n.yaml"
    cat >"$scenario" <<EOF
name: record-bench
target: http://127.0.0.1:$PORT
monitor: { host: false }
load: { model: closed, vus: $VUS, iterations: $((n / VUS)), max_duration: 10m }
steps: [ { get: /api/ping } ]
EOF
    (cd "$OUT" && valgrind --tool=callgrind --callgrind-out-file="$file" \
        "$bin" run "$scenario" --threads 1 --quiet --allow-saturated --no-progress \
        --json "$OUT/$tag.$n.json" >/dev/null 2>"$OUT/$tag.$n.err") || true
    grep -m1 '^summary:' "$file" | awk '{print $2}'
}

declare -A per_req
for tag in base new; do
    bin="$LOADLAB"; [[ $tag == base ]] && bin="$BASE"
    a=$(instructions "$bin" "$REQS1" "$tag")
    b=$(instructions "$bin" "$REQS2" "$tag")
    per_req[$tag]=$(python3 -c "print(($b - $a) / ($REQS2 - $REQS1))")
    log "$tag: $a instructions for $REQS1 requests, $b for $REQS2 → ${per_req[$tag]} per request"
done

python3 - "$OUT" "${per_req[base]}" "${per_req[new]}" <<'PY'
import json, os, sys, glob
out, base, new = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
print("| binary | instructions per request (marginal) |")
print("|---|---|")
print(f"| before the run record | {base:,.0f} |")
print(f"| with the run record | {new:,.0f} |")
print(f"| **ratio** | **{new/base:.3f}×** |")
# What the record of the larger run wrote.
runs = sorted(glob.glob(os.path.join(out, "loadlab-results", "runs", "*")))
if runs:
    d = runs[-1]
    size = lambda f: os.path.getsize(os.path.join(d, f)) if os.path.exists(os.path.join(d, f)) else 0
    intervals = sum(1 for _ in open(os.path.join(d, "counters.jsonl")))
    steps = len(json.load(open(os.path.join(d, "record.json")))["steps"])
    hlog, counters = size("intervals.hlog"), size("counters.jsonl")
    per_hlog = hlog / max(intervals, 1) / max(steps, 1)
    per_counters = counters / max(intervals, 1)
    print()
    print(f"record of a {intervals}-interval run with {steps} step(s): intervals.hlog {hlog} B, counters.jsonl {counters} B, record.json {size('record.json')} B")
    print(f"per interval: {per_hlog:,.0f} B of histograms per step, {per_counters:,.0f} B of counters")
    for n in (1, 10):
        hour = 3600 * (per_hlog * n + per_counters * (1 + 0.3 * (n - 1)))
        print(f"a 1-hour run with {n} step(s) writes about {hour / 1e6:.1f} MB")
PY
