#!/usr/bin/env bash
# gRPC unary calls: generator CPU per call of loadlab (a `grpc:` step) next to ghz (Go, the
# usual gRPC load tool, installed from the Go module proxy) and h2load (nghttp2, raw HTTP/2
# with gRPC framing: a fixed request frame, `te: trailers`; it cannot read grpc-status), all
# against `loadlab target`'s permits.v1.Permits/Create pinned to another CPU, the same
# concurrency on one HTTP/2 connection, interleaved. Prints calls/s, CPU µs per call and
# loadlab's ratio to each peer (median of REPS). With BASELINE=1 also plain HTTP/2 GETs of
# /api/ping by loadlab and h2load in the same setting, to separate what gRPC adds from HTTP/2.
# Usage: bash bench/grpc-unary.sh      (REPS=5 DURATION=10 CONCURRENCY=50 BASELINE=1 H2CRATE=1;
# `loadlab` is its default HTTP/2 client; H2CRATE=1 adds loadlab through the `h2` crate,
# `--http2-client h2`)
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
OUT="$BENCH_DIR/out/grpc"
REPS="${REPS:-5}"
DURATION="${DURATION:-10}"
CONCURRENCY="${CONCURRENCY:-50}"
PORT="${PORT:-18095}"
TARGET_CPU="${TARGET_CPU:-0}"
GEN_CPU="${GEN_CPU:-1}"
LOADLAB="${LOADLAB:-$ROOT/target/release/loadlab}"
GHZ_VERSION="${GHZ_VERSION:-v0.120.0}"
URL="http://127.0.0.1:$PORT"
export LOADLAB_RESULTS="$OUT/results"

log() { printf '[grpc] %s\n' "$*" >&2; }
rm -rf "$OUT" && mkdir -p "$OUT/bin"
[[ -x "$LOADLAB" ]] || (cd "$ROOT" && cargo build --release)
GHZ="$(command -v ghz || true)"
if [[ -z "$GHZ" ]]; then
    log "installing ghz $GHZ_VERSION from the Go module proxy"
    GOBIN="$OUT/bin" go install "github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION"
    GHZ="$OUT/bin/ghz"
fi
command -v h2load >/dev/null || { log "h2load missing: apt-get install nghttp2-client"; exit 1; }

TARGET_PID=""
stop_target() { [[ -n "$TARGET_PID" ]] && kill "$TARGET_PID" 2>/dev/null && wait "$TARGET_PID" 2>/dev/null || true; TARGET_PID=""; }
trap stop_target EXIT
taskset -c "$TARGET_CPU" "$LOADLAB" target --listen "127.0.0.1:$PORT" --threads 1 >"$OUT/target.log" 2>&1 &
TARGET_PID=$!
for _ in $(seq 50); do curl -fs "$URL/health" >/dev/null 2>&1 && break; sleep 0.1; done

# The same message everywhere: CreateRequest { applicant: "bench", kind: "building" }.
MESSAGE='{"applicant": "bench", "kind": "building"}'
cat >"$OUT/grpc.yaml" <<YAML
name: bench grpc unary
target: $URL
http: { connections: 1, max_streams: $((CONCURRENCY * 2)) }
load: { model: closed, vus: $CONCURRENCY, duration: ${DURATION}s }
steps:
  - name: create
    grpc:
      proto: $ROOT/examples/proto/permits.proto
      call: permits.v1.Permits/Create
      message: $MESSAGE
YAML
cat >"$OUT/h2-get.yaml" <<YAML
name: bench h2 get
target: $URL
http: { version: "2", connections: 1, max_streams: $((CONCURRENCY * 2)) }
load: { model: closed, vus: $CONCURRENCY, duration: ${DURATION}s }
steps: [ { get: /api/ping } ]
YAML
# h2load's request body: the same message, encoded by hand (field 1 "bench", field 2
# "building") in one uncompressed gRPC frame of 17 bytes.
printf '\x00\x00\x00\x00\x11\x0a\x05bench\x12\x08building' >"$OUT/frame.bin"

# cpu_of TIMEFILE : user + system seconds /usr/bin/time wrote.
cpu_of() { awk '{print $2 + $3}' "$1"; }
timed() { # TAG CMD... : runs CMD pinned to the generator CPU, its CPU time in $OUT/TAG.time
    local tag="$1"; shift
    taskset -c "$GEN_CPU" /usr/bin/time -o "$OUT/$tag.time" -f '%e %U %S %M' \
        timeout -k 5 "$((DURATION + 30))" "$@" >"$OUT/$tag.out" 2>"$OUT/$tag.err" || true
}

run_loadlab() { # REP [GEN [FLAGS...]]
    local rep="$1" gen="${2:-loadlab}"
    shift $(($# < 2 ? $# : 2))
    timed "$gen-$rep" "$LOADLAB" run "$OUT/grpc.yaml" --threads 1 --quiet --no-progress --allow-saturated --json "$OUT/$gen-$rep.json" "$@"
    python3 - "$OUT/$gen-$rep.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["steps"][0]
print(s["grpc"]["status_codes"].get("OK", 0), s["requests"])
PY
}
# loadlab through the `h2` crate (H2CRATE=1 adds it).
run_loadlab_h2() { run_loadlab "$1" loadlab_h2 --http2-client h2; }
run_ghz() {
    timed "ghz-$1" "$GHZ" --insecure --proto "$ROOT/examples/proto/permits.proto" \
        --call permits.v1.Permits/Create -d "$MESSAGE" -c "$CONCURRENCY" --connections 1 \
        -z "${DURATION}s" -O json "127.0.0.1:$PORT"
    python3 - "$OUT/ghz-$1.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(r.get("statusCodeDistribution", {}).get("OK", 0), r["count"])
PY
}
run_h2load() {
    timed "h2load-$1" h2load -c 1 -m "$CONCURRENCY" -t 1 -D "$DURATION" -d "$OUT/frame.bin" \
        -H 'content-type: application/grpc' -H 'te: trailers' "$URL/permits.v1.Permits/Create"
    # "requests: N total, N started, N done, N succeeded" (HTTP 2xx; the grpc-status unread).
    awk '/^requests:/ {print $8, $6}' "$OUT/h2load-$1.out"
}

run_loadlab_get() {
    timed "loadlab_get-$1" "$LOADLAB" run "$OUT/h2-get.yaml" --threads 1 --quiet --no-progress --allow-saturated --json "$OUT/loadlab_get-$1.json"
    python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['steps'][0]; print(s['requests']-s['failed'], s['requests'])" "$OUT/loadlab_get-$1.json"
}
run_h2load_get() {
    timed "h2load_get-$1" h2load -c 1 -m "$CONCURRENCY" -t 1 -D "$DURATION" "$URL/api/ping"
    awk '/^requests:/ {print $8, $6}' "$OUT/h2load_get-$1.out"
}

printf 'rep gen ok calls elapsed_s cpu_s\n' >"$OUT/runs.txt"
for ((rep = 1; rep <= REPS; rep++)); do
    gens=(loadlab ghz h2load)
    [[ "${H2CRATE:-0}" == 1 ]] && gens+=(loadlab_h2)
    [[ "${BASELINE:-0}" == 1 ]] && gens+=(loadlab_get h2load_get)
    ((rep % 2)) || gens=($(printf '%s\n' "${gens[@]}" | tac))
    for gen in "${gens[@]}"; do
        read -r ok calls < <("run_$gen" "$rep")
        read -r elapsed _ < "$OUT/$gen-$rep.time"
        printf '%d %s %s %s %s %s\n' "$rep" "$gen" "$ok" "$calls" "$elapsed" "$(cpu_of "$OUT/$gen-$rep.time")" >>"$OUT/runs.txt"
        sleep 1
    done
done
python3 - "$OUT/runs.txt" "$REPS" "$DURATION" "$CONCURRENCY" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
by = {}
for rep, gen, ok, calls, elapsed, cpu in rows:
    by.setdefault(gen, []).append((int(ok), int(calls), float(elapsed), float(cpu)))
print(f"gRPC unary, permits.v1.Permits/Create on `loadlab target`, {sys.argv[4]} concurrent calls on one HTTP/2 connection, {sys.argv[3]} s × {sys.argv[2]} reps (medians)\n")
print("| generator | calls/s | OK | CPU µs per call |")
print("|---|---:|---:|---:|")
med = {}
for gen, runs in by.items():
    rate = statistics.median(c / e for _, c, e, _ in runs)
    per = statistics.median(cpu / max(c, 1) * 1e6 for _, c, _, cpu in runs)
    ok = statistics.median(o / max(c, 1) for o, c, _, _ in runs)
    med[gen] = per
    print(f"| {gen} | {rate:.0f} | {ok:.1%} | {per:.1f} |")
for peer in ("ghz", "h2load"):
    for mine in ("loadlab", "loadlab_h2"):
        if peer in med and mine in med:
            print(f"\n{mine} CPU per call / {peer}: {med[mine] / med[peer]:.2f}")
if "loadlab_get" in med and "h2load_get" in med:
    print(f"\nplain HTTP/2 GET, loadlab CPU per request / h2load: {med['loadlab_get'] / med['h2load_get']:.2f}")
    print(f"what gRPC adds to loadlab's CPU per call: {med['loadlab'] - med['loadlab_get']:.1f} µs")
PY
