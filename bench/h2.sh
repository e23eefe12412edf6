#!/usr/bin/env bash
# loadlab HTTP/2 efficiency benchmark: CPU per request of loadlab over h2c vs h2load (nghttp2)
# against a pinned local nginx (`listen ... http2`, one worker), for each connections × streams
# setting, interleaved. See bench/README.md. Usage: bash bench/h2.sh   (REPS=5 SETTINGS="1x100 10x10";
# GENS="h2load loadlab loadlab-h2" adds loadlab through the `h2` crate, `--http2-client h2`;
# `loadlab` is its default client, and `loadlab-wire` names that one explicitly).
# RATE=50000 holds both generators at that many requests/s (h2load --rps per connection,
# loadlab's open model with C×M in flight at most) instead of as fast as they go: below both
# ceilings, CPU per request is each generator's own cost, not the pair's ping-pong with nginx.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
OUT="$BENCH_DIR/out/h2"

REPS="${REPS:-5}"                      # repetitions (medians and spread are reported)
SETTINGS="${SETTINGS:-1x100 10x10}"    # connections x streams per connection
DURATION="${DURATION:-10}"             # seconds per run
PAUSE="${PAUSE:-1}"                    # seconds of quiet between runs
NGINX_CPU="${NGINX_CPU:-0}"            # CPU nginx is pinned to
GEN_CPU="${GEN_CPU:-1}"                # CPU the generator (and its wrappers) is pinned to
GENS="${GENS:-h2load loadlab}"         # generators; loadlab-h2 / loadlab-wire: --http2-client h2 / wire
RATE="${RATE:-}"                       # requests/s for both (empty: as fast as each goes)
PORT="${PORT:-18082}"
STATUS_PORT="${STATUS_PORT:-18083}"
GRACE="${GRACE:-30}"                   # hard bound: duration + this, then SIGTERM/SIGKILL
LOADLAB="${LOADLAB:-$ROOT/target/release/loadlab}"
URL="http://127.0.0.1:${PORT}/"
STATUS_URL="http://127.0.0.1:${STATUS_PORT}/status"
MEASURE=(python3 "$BENCH_DIR/measure.py")
failures=0

# shellcheck source=bench/lib.sh
source "$BENCH_DIR/lib.sh"

ensure_tools() {
    local pkgs=()
    command -v h2load >/dev/null 2>&1 || pkgs+=(nghttp2-client)
    command -v nginx >/dev/null 2>&1 || [[ -x /usr/sbin/nginx ]] || pkgs+=(nginx-light)
    command -v taskset >/dev/null 2>&1 || pkgs+=(util-linux)
    [[ -x /usr/bin/time ]] || pkgs+=(time)
    command -v python3 >/dev/null 2>&1 || pkgs+=(python3)
    install_missing "${pkgs[@]}"
    NGINX_BIN="$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)"
}

# Debian's nginx 1.22 speaks h2c with prior knowledge on `listen ... http2` without ssl (and
# only HTTP/2 there); keepalive_requests bounds HTTP/2 connections too since 1.19.7.
NGINX_LISTEN_OPTS=http2
NGINX_HTTP_EXTRA="http2_max_concurrent_streams 128;"
NGINX_KEEPALIVE_REQUESTS=10000000

# The loadlab scenario for C connections x M streams: C*M VUs keep every stream busy, as
# h2load -c C -m M does.
scenario() {
    local c="$1" m="$2" file="$OUT/h2-${1}x${2}.yaml"
    cat >"$file" <<EOF
name: h2c ${c}x${m}
target: $URL
http: { version: "2", connections: $c, max_streams: $m }
$(load_line "$c" "$m")
steps: [ { get: / } ]
EOF
    echo "$file"
}

# load_line C M : closed C×M VUs, or RATE/s open with C×M in flight at most.
load_line() {
    if [[ -n "$RATE" ]]; then
        echo "load: { model: open, stages: [ { duration: ${DURATION}s, rate: ${RATE}/s } ], max_in_flight: $(($1 * $2)) }"
    else
        echo "load: { model: closed, vus: $(($1 * $2)), duration: ${DURATION}s }"
    fi
}

# run_one SETTING GEN REP
run_one() {
    local setting="$1" gen="$2" rep="$3" c m tag json="" before after rc cmd
    c="${setting%x*}"
    m="${setting#*x}"
    tag="$setting-$gen-$rep"
    case "$gen" in
        h2load)
            cmd=(h2load -c "$c" -m "$m" -t 1 -D "$DURATION")
            [[ -z "$RATE" ]] || cmd+=("--rps=$((RATE / c))")
            cmd+=("$URL") ;;
        loadlab | loadlab-wire | loadlab-h2)
            json="$OUT/$tag.json"
            cmd=("$LOADLAB" run "$(scenario "$c" "$m")" --threads 1 --quiet --allow-saturated --json "$json")
            [[ "$gen" == loadlab ]] || cmd+=(--http2-client "${gen#loadlab-}") ;;
    esac
    echo "${cmd[*]}" >"$OUT/$tag.cmd"
    before="$("${MEASURE[@]}" status "$STATUS_URL")"
    set +e
    taskset -c "$GEN_CPU" /usr/bin/time -o "$OUT/$tag.time" -f '%e %U %S %M' \
        timeout -k 5 "$((DURATION + GRACE))" "${cmd[@]}" >"$OUT/$tag.stdout" 2>"$OUT/$tag.stderr"
    rc=$?
    set -e
    sleep 0.2
    after="$("${MEASURE[@]}" status "$STATUS_URL")"
    local extra=(--stdout "$OUT/$tag.stdout")
    [[ -n "$json" ]] && extra+=(--json "$json")
    if ! "${MEASURE[@]}" record --runs "$OUT/runs.jsonl" --mode "$setting" --gen "$gen" --rep "$rep" --rc "$rc" \
        --time-file "$OUT/$tag.time" --before "$before" --after "$after" "${extra[@]}"; then
        failures=$((failures + 1))
        log "$tag failed; its output: $OUT/$tag.stdout $OUT/$tag.stderr"
        tail -n 5 "$OUT/$tag.stderr" >&2 || true
    fi
    sleep "$PAUSE"
}

[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer"
[[ -x "$LOADLAB" ]] || die "$LOADLAB not found: build it (cargo build --release)"
ensure_tools
start_fresh_nginx
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "pinning: nginx on CPU $NGINX_CPU (1 worker), generator on CPU $GEN_CPU"
    echo "nginx: $("$NGINX_BIN" -v 2>&1 | sed 's/.*: //'); $(h2load --version 2>&1 | head -n1)"
    echo "loadlab: $("$LOADLAB" --version | head -n1), git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (dirty)')"
    echo "repetitions: $REPS × ${DURATION} s, settings (connections x streams): $SETTINGS; generators ($GENS) alternate which goes first"
    [[ -z "$RATE" ]] || echo "fixed rate: $RATE requests/s (h2load --rps=RATE/C; loadlab open model, max_in_flight C×M)"
    echo "h2load: \`h2load -c C -m M -t 1 -D $DURATION $URL\`; loadlab: \`loadlab run h2-CxM.yaml --threads 1\` with \`http: {version: \"2\", connections: C, max_streams: M}\` and C×M closed-model VUs"
} >"$OUT/meta.txt"

for ((rep = 1; rep <= REPS; rep++)); do
    for setting in $SETTINGS; do
        read -r -a order <<<"$GENS"
        ((rep % 2)) || mapfile -t order < <(printf '%s\n' "${order[@]}" | tac)
        for gen in "${order[@]}"; do
            run_one "$setting" "$gen" "$rep"
        done
    done
done

echo >&2
"${MEASURE[@]}" report-h2 --runs "$OUT/runs.jsonl" --out "$OUT/results.md" --meta "$OUT/meta.txt"
if ((failures)); then
    log "$failures run(s) failed; see $OUT/*.stderr"
    exit 1
fi
log "results: $OUT/results.md"
