#!/usr/bin/env bash
# Open-model benchmark: the ceiling (highest constant rate one generator core sustains) and the
# CPU per request at 5,000/s, loadlab next to oha (and wrk closed as a reference), measured in
# the same run against a pinned local nginx. See bench/README.md ("Open model").
# Usage: bash bench/openmodel.sh   (REPS=3 DURATION=3 LADDER=40000,...,140000 LOW_RATE=5000)
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
OUT="${OUT:-$BENCH_DIR/out-openmodel}"

REPS="${REPS:-3}"                     # interleaved repetitions (medians are reported)
DURATION="${DURATION:-3}"             # seconds per ladder point
LADDER="${LADDER:-40000,60000,80000,100000,120000,140000}" # constant rates tried, in order
LOW_RATE="${LOW_RATE:-5000}"          # the low-rate CPU-per-request point
LOW_DURATION="${LOW_DURATION:-5}"     # seconds of it
CONNS="${CONNS:-50}"                  # oha and wrk connections
NGINX_CPU="${NGINX_CPU:-0}"
GEN_CPU="${GEN_CPU:-1}"
PORT="${PORT:-18090}"
STATUS_PORT="${STATUS_PORT:-18091}"
URL="http://127.0.0.1:${PORT}/"
STATUS_URL="http://127.0.0.1:${STATUS_PORT}/status"
LOADLAB="${LOADLAB:-$ROOT/target/release/loadlab}"
MEASURE=(python3 "$BENCH_DIR/measure.py")

# shellcheck source=bench/lib.sh
source "$BENCH_DIR/lib.sh"

ensure_tools() {
    local pkgs=()
    command -v wrk >/dev/null 2>&1 || pkgs+=(wrk)
    command -v nginx >/dev/null 2>&1 || [[ -x /usr/sbin/nginx ]] || pkgs+=(nginx)
    command -v taskset >/dev/null 2>&1 || pkgs+=(util-linux)
    command -v python3 >/dev/null 2>&1 || pkgs+=(python3)
    install_missing "${pkgs[@]}"
    NGINX_BIN="$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)"
    OHA="$(command -v oha 2>/dev/null || echo "$HOME/.cargo/bin/oha")"
    if [[ ! -x "$OHA" ]]; then
        log "installing oha (cargo install oha --locked; a few minutes)"
        cargo install oha --locked >&2
        OHA="$HOME/.cargo/bin/oha"
    fi
}

[[ -x "$LOADLAB" ]] || die "$LOADLAB not found: build it (cargo build --release)"
((NGINX_CPU != GEN_CPU)) || log "WARNING: nginx and the generator share CPU $GEN_CPU"
ensure_tools
start_fresh_nginx
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "host: $(uname -srm), $(nproc) CPUs; nginx on CPU $NGINX_CPU, generator on CPU $GEN_CPU"
    echo "loadlab: git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'); $("$OHA" --version 2>/dev/null | head -n1); wrk $(wrk -v 2>&1 | head -n1 | awk '{print $2}')"
} | tee "$OUT/meta.txt" >&2
python3 "$BENCH_DIR/openmodel.py" --url "$URL" --status-url "$STATUS_URL" --loadlab "$LOADLAB" \
    --oha "$OHA" --gen-cpu "$GEN_CPU" --reps "$REPS" --duration "$DURATION" --ladder "$LADDER" \
    --low-rate "$LOW_RATE" --low-duration "$LOW_DURATION" --conns "$CONNS" --out "$OUT"
