#!/usr/bin/env bash
# Distributed runs on one machine: the figures issue 12 names.
#
# 1. Burst split: seed 003's spike, a burst of 66,668 arrivals, run as 4 segments of 16,667
#    (4 processes meeting at the start barrier in a file:// "bucket", each under the 20,000
#    open-files limit) against `loadlab target` (4 processes sharing one port), merged: prints the merged request count
#    (must be 66,668), per-segment counts and the wall time.
# 2. Upload cost: one segment streaming its record to a real S3 API (moto on loopback) with
#    --upload-every 1s and 5s, 20 s at 200 arrivals/s: prints the uploads, bytes per interval,
#    time per upload (the uploader thread's, beside the load) and the process's CPU seconds next
#    to the same run into a local directory.
#
#   bench/distributed.sh            # both (builds target/release/loadlab first)
#   BIN=target/debug/loadlab bench/distributed.sh burst
set -euo pipefail
cd "$(dirname "$0")/.."
WHAT="${1:-all}"
if [ -z "${BIN:-}" ]; then
    cargo build --release --quiet
    BIN=target/release/loadlab
fi
PY="${PYTHON:-python3}"
OUT=$(mktemp -d /tmp/loadlab-bench-dist.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$OUT"; }
trap cleanup EXIT
export LOADLAB_RESULTS="$OUT/local"

# One target process holds at most 20,000 connections here (its open-files limit), the
# burst opens 66,668 at once: four `loadlab target --reuse-port` processes share one port
# (the kernel spreads the connections), as the generators share the burst.
start_target() {
    local port n="${1:-1}"
    port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    for k in $(seq "$n"); do
        "$BIN" target --listen "127.0.0.1:$port" --reuse-port > "$OUT/target$k.txt" &
        PIDS+=($!)
    done
    for _ in $(seq 50); do grep -q http "$OUT/target1.txt" 2>/dev/null && break; sleep 0.1; done
    TARGET="http://127.0.0.1:$port"
}

burst() {
    start_target 4
    cat > "$OUT/spike.yaml" <<YAML
name: seed 003 spike, split in 4
target: $TARGET
defaults: { timeout: 60s }
# 66,668 connections to one address need more than one source address's 28,000 ports.
source_addresses: 127.0.0.1-127.0.0.8
load: { model: burst, count: 66668 }
steps:
  - { name: ping, get: /api/ping }
YAML
    local url="file://$OUT/bucket/spike"
    local t0=$(date +%s.%N)
    for i in 0 1 2 3; do
        "$BIN" run "$OUT/spike.yaml" --segment "$i/4" --results "$url" --quiet --no-progress \
            > "$OUT/seg$i.txt" 2>&1 &
        PIDS+=($!)
    done
    wait "${PIDS[@]:4}" || true
    local t1=$(date +%s.%N)
    "$BIN" merge "$url" --quiet --json "$OUT/merged.json" || true
    "$PY" - "$OUT/merged.json" "$t0" "$t1" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
n = r["requests"]["total"] + r["requests"]["warmup"]
print(f"burst split: merged requests {n} (plan 66668) {'OK' if n == 66668 else 'MISMATCH'}; "
      f"failed {r['requests']['failed']} {dict(r['errors'])}; valid {r['valid']}")
print("  per segment:", [s["requests"] for s in r["segments"]],
      "generator cpu %:", [round(s["cpu_percent"]) for s in r["segments"]])
print(f"  latency p50 {r['latency_ms']['p50']:.1f} ms p99 {r['latency_ms']['p99']:.1f} ms; "
      f"wall time of the 4 processes {float(sys.argv[3]) - float(sys.argv[2]):.1f} s (5 s of it the barrier's lead)")
PYEOF
}

uploads() {
    start_target
    local port
    port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    "$PY" -m moto.server -H 127.0.0.1 -p "$port" > /dev/null 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.2; done
    curl -s -X PUT -o /dev/null "http://127.0.0.1:$port/loadlab-bench"
    export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1 \
        AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ALLOW_HTTP=true
    cat > "$OUT/steady.yaml" <<YAML
name: upload cost
target: $TARGET
load: { model: open, rate: 200/s, duration: 20s }
steps:
  - { name: a, get: /api/ping }
  - { name: b, get: /api/ping }
YAML
    for every in 1s 5s local; do
        if [ "$every" = local ]; then
            dest=(--results "$OUT/local-dir")
        else
            dest=(--results "s3://loadlab-bench/r-$every" --upload-every "$every")
        fi
        /usr/bin/time -f "%U %S" -o "$OUT/time.txt" \
            "$BIN" run "$OUT/steady.yaml" --segment 0/1 --start-at +1s "${dest[@]}" --no-progress \
            > "$OUT/run.txt" 2>&1
        read -r user sys < "$OUT/time.txt"
        line=$(grep -E '^(stored|partial)' "$OUT/run.txt" | tail -1)
        echo "uploads ($every): cpu ${user}s user + ${sys}s sys for 4,000 arrivals; $line"
    done
}

case "$WHAT" in
burst) burst ;;
uploads) uploads ;;
*) burst; uploads ;;
esac
