#!/usr/bin/env bash
# Two loadlab builds in the open model, interleaved, against a pinned local nginx: the tail,
# the connections, the scheduler lag and the CPU per request of each (medians of REPS).
# Usage: A=/path/to/old/loadlab [B=target/release/loadlab] bash bench/openmodel-ab.sh
#        (RATES=40000,50000,60000 REPS=3 DURATION=5; EXTRA="--max-in-flight 50";
#         MODEL=closed RATES=10,50: VU counts in the closed model)
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
OUT="${OUT:-$BENCH_DIR/out-openmodel-ab}"
A="${A:?A=path of the build to compare against}"
B="${B:-$ROOT/target/release/loadlab}"
RATES="${RATES:-40000,50000,60000}"
REPS="${REPS:-3}"
DURATION="${DURATION:-5}"
EXTRA="${EXTRA:-}"
MODEL="${MODEL:-open}"
NGINX_CPU="${NGINX_CPU:-0}"
GEN_CPU="${GEN_CPU:-1}"
PORT="${PORT:-18090}"
STATUS_PORT="${STATUS_PORT:-18091}"
URL="http://127.0.0.1:${PORT}/"
STATUS_URL="http://127.0.0.1:${STATUS_PORT}/status"
MEASURE=(python3 "$BENCH_DIR/measure.py")

# shellcheck source=bench/lib.sh
source "$BENCH_DIR/lib.sh"

[[ -x "$A" ]] || die "$A not found"
[[ -x "$B" ]] || die "$B not found: build it (cargo build --release)"
pkgs=()
command -v nginx >/dev/null 2>&1 || [[ -x /usr/sbin/nginx ]] || pkgs+=(nginx)
command -v taskset >/dev/null 2>&1 || pkgs+=(util-linux)
install_missing "${pkgs[@]}"
NGINX_BIN="$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)"
start_fresh_nginx
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# shellcheck disable=SC2086
python3 "$BENCH_DIR/openmodel_ab.py" --url "$URL" --status-url "$STATUS_URL" --a "a=$A" --b "b=$B" \
    --rates "$RATES" --model "$MODEL" --reps "$REPS" --duration "$DURATION" --gen-cpu "$GEN_CPU" --out "$OUT" \
    -- $EXTRA
