#!/usr/bin/env bash
# Seed study 003 at full size on one machine: a warm-up spike, then ROUNDS rounds of the
# 66,666-user spike of examples/seed-003-spike.yaml, each round split into 4 generator
# segments (16,667 users each, `loadlab study --segments 4`) against 4 `loadlab target --reuse-port` processes sharing
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
# Uses `loadlab` from PATH, or target/release/loadlab (LOADLAB=path overrides). Prints the
# study's summary and stores every round in ./loadlab-results (or $LOADLAB_RESULTS): the
# study's report has the per-round and per-segment tables, `loadlab report ID` writes a
# round's own (per-step tables: sign-in and reservation apart; client vs server latency).
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

# The study of the file (one unmeasured warm-up spike, then ROUNDS rounds, 10 s apart), each
# round as SEGMENTS processes started together at a barrier and merged exactly into one run.
# The report adds each round's and each segment's figures, a two-level bootstrap CI and
# where the variance lies (docs/studies.md, "Rounds of segments").
"$LOADLAB" study examples/seed-003-spike.yaml --segments "$SEGMENTS" --repeat "$ROUNDS" \
    --allow-saturated --no-progress || true
echo
echo "every round is a stored run: loadlab runs; the study's report: loadlab runs studies"
