#!/usr/bin/env bash
# Seed study 003 at full size on one machine: a warm-up spike, then ROUNDS rounds of the
# 66,666-user spike of examples/seed-003-spike.yaml, each round split into 4 generator
# segments (16,667 users each) against 4 `loadlab target --reuse-port` processes sharing
# port 8130, merged exactly (histograms added) into one run per round.
#
# Why split: one process here may hold 20,000 open files (`ulimit -Hn`); a 66,666-user spike
# needs 66,666 connections in the generator and as many in the target. loadlab refuses a
# plan that cannot get its files before sending anything, so one process cannot run it.
#
#   bash examples/seed-003-full-size.sh            # ROUNDS=6 by default; about 15 minutes
#   ROUNDS=1 bash examples/seed-003-full-size.sh   # one round after the warm-up, about 5 minutes
# (measured on this 2-core machine while it was busy: 2–2.5 minutes per spike; most of the
# 66,666 sign-ins wait for a CPU, so latencies run into minutes and many requests time out —
# the report says the host was saturated and marks the rounds invalid)
#
# Uses `loadlab` from PATH, or target/release/loadlab (LOADLAB=path overrides). Prints each
# round's merged summary and stores every round in ./loadlab-results (or $LOADLAB_RESULTS):
# `loadlab runs` lists them, `loadlab report ID` writes a round's report (per-step tables:
# sign-in and reservation apart; client vs server latency; the per-segment table).
# On 2 cores the generators, the targets and the kernel share the CPU: latencies here say
# how this machine copes with the spike, not how a target would; the counts are exact.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-6}"
SEGMENTS=4
PORT=8130
LOADLAB="${LOADLAB:-$(command -v loadlab || echo target/release/loadlab)}"
[ -x "$LOADLAB" ] || { echo "no loadlab binary: cargo build --release, or cargo install --path ." >&2; exit 2; }
WORK=$(mktemp -d /tmp/loadlab-seed-003.XXXXXX)
TARGETS=()
cleanup() { for p in "${TARGETS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

# The target of the example's header, as 4 processes of a quarter of its workers each.
for k in $(seq "$SEGMENTS"); do
    "$LOADLAB" target --listen "127.0.0.1:$PORT" --reuse-port --workers 16 \
        --service-time 10ms --service-dist exp > "$WORK/target$k.txt" &
    TARGETS+=($!)
done
for _ in $(seq 50); do grep -q http "$WORK/target1.txt" 2>/dev/null && break; sleep 0.1; done
grep -q http "$WORK/target1.txt" || { echo "the targets did not start (port $PORT busy?)" >&2; exit 2; }

# One spike as SEGMENTS processes started together, merged into one stored run.
spike() {
    local label=$1 t0
    local start
    start=$(date -u -d '+8 seconds' +%Y-%m-%dT%H:%M:%SZ)
    t0=$(date +%s)
    local pids=()
    for i in $(seq 0 $((SEGMENTS - 1))); do
        "$LOADLAB" run examples/seed-003-spike.yaml --segment "$i/$SEGMENTS" --start-at "$start" \
            --results "$WORK/$label/segment$i" --quiet --no-progress --allow-saturated \
            > "$WORK/$label-segment$i.txt" 2>&1 &
        pids+=($!)
    done
    local failed=0
    for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
    echo "== $label: $SEGMENTS segments done in $(( $(date +%s) - t0 )) s ($failed exited non-zero: thresholds or timeouts)"
    "$LOADLAB" merge "$WORK/$label"/segment*/runs/*/ || true
}

spike warm-up
echo "(the warm-up round is stored too; it is not one of the rounds)"
for r in $(seq "$ROUNDS"); do
    sleep 10
    spike "round-$r"
done
echo
echo "every round is a stored run: loadlab runs; a round's report: loadlab report ID"
