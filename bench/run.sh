#!/usr/bin/env bash
# loadlab efficiency benchmark: CPU per request of loadlab vs wrk against a pinned local nginx.
# See bench/README.md. Usage: bash bench/run.sh   (REPS=5, LONG=1, GENERATORS=wrk, ... see below)
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
OUT="$BENCH_DIR/out"

# ----------------------------------------------------------------------------- knobs
REPS="${REPS:-3}"                      # repetitions of every measurement (medians are reported)
LONG="${LONG:-0}"                      # 1: also the 60 s RSS-flatness run
GENERATORS="${GENERATORS:-wrk loadlab}" # closed-model generators, run interleaved per repetition
                                       # (add `baseline` to run $BASELINE, another loadlab build, too)
OPEN="${OPEN:-1}"                      # 0: skip the open-model runs (they need loadlab in GENERATORS)
DURATION="${DURATION:-10}"             # seconds per closed/open run
CONNS="${CONNS:-50}"                   # wrk connections = loadlab VUs
OPEN_RATE="${OPEN_RATE:-5000}"         # arrivals/s of the open-model run
LONG_RATE="${LONG_RATE:-2000}"         # arrivals/s of the RSS-flatness run
LONG_DURATION="${LONG_DURATION:-60}"   # seconds of the RSS-flatness run
RSS_TOLERANCE="${RSS_TOLERANCE:-10}"   # percent change of RSS 10 s -> end still called "flat"
WARMUP="${WARMUP:-2}"                  # seconds of unmeasured wrk load before the first run (0: none)
PAUSE="${PAUSE:-1}"                    # seconds of quiet between runs
NGINX_CPU="${NGINX_CPU:-0}"            # CPU nginx is pinned to
GEN_CPU="${GEN_CPU:-1}"                # CPU the generator (and its wrappers) is pinned to
PORT="${PORT:-18080}"
STATUS_PORT="${STATUS_PORT:-18081}"
URL="http://127.0.0.1:${PORT}/"
STATUS_URL="http://127.0.0.1:${STATUS_PORT}/status"

LOADLAB="${LOADLAB:-$ROOT/target/release/loadlab}"
BASELINE="${BASELINE:-}"               # generator `baseline`: another loadlab binary (e.g. built from main)
# The generator command lines. Placeholders: @URL@ @VUS@ @DURATION@ @RATE@ @JSON@.
# They are split on whitespace (no quoting), so keep paths free of spaces.
WRK_CMD="${WRK_CMD:-wrk -t1 -c@VUS@ -d@DURATION@s @URL@}"
LOADLAB_CLOSED_CMD="${LOADLAB_CLOSED_CMD:-$LOADLAB run --url @URL@ --vus @VUS@ --duration @DURATION@s --quiet --allow-saturated --json @JSON@}"
LOADLAB_OPEN_CMD="${LOADLAB_OPEN_CMD:-$LOADLAB run --url @URL@ --rate @RATE@/s --duration @DURATION@s --quiet --json @JSON@}"
BASELINE_CLOSED_CMD="${BASELINE_CLOSED_CMD:-$BASELINE run --url @URL@ --vus @VUS@ --duration @DURATION@s --quiet --allow-saturated --json @JSON@}"
# Hard bound on any one generator process: planned duration + this many seconds, then SIGTERM/SIGKILL.
GRACE="${GRACE:-30}"

MEASURE=(python3 "$BENCH_DIR/measure.py")
failures=0
BG_PIDS=()

# shellcheck source=bench/lib.sh
source "$BENCH_DIR/lib.sh"

# ----------------------------------------------------------------------------- install
ensure_tools() {
    local pkgs=()
    command -v wrk >/dev/null 2>&1 || pkgs+=(wrk)
    command -v nginx >/dev/null 2>&1 || [[ -x /usr/sbin/nginx ]] || pkgs+=(nginx)
    command -v taskset >/dev/null 2>&1 || pkgs+=(util-linux)
    [[ -x /usr/bin/time ]] || pkgs+=(time)
    command -v timeout >/dev/null 2>&1 || pkgs+=(coreutils)
    command -v python3 >/dev/null 2>&1 || pkgs+=(python3)
    install_missing "${pkgs[@]}"
    NGINX_BIN="$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)"
}

# ----------------------------------------------------------------------------- cleanup
# Only processes this harness started (their pids are in $OUT/*.pid, $OUT/bg.pids) are killed.

kill_leftovers() {
    local pid
    if [[ -f "$OUT/bg.pids" ]]; then
        while read -r pid; do
            pid_is "$pid" 'loadlab\|measure.py\|wrk' && kill -TERM "$pid" 2>/dev/null || true
        done <"$OUT/bg.pids"
    fi
    stop_nginx
}

cleanup() {
    local pid
    for pid in "${BG_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    stop_nginx
}

# ----------------------------------------------------------------------------- runs
# expand TEMPLATE VUS DURATION RATE JSON -> sets global array ARGV
expand() {
    local c="$1"
    c="${c//@URL@/$URL}"
    c="${c//@VUS@/$2}"
    c="${c//@DURATION@/$3}"
    c="${c//@RATE@/$4}"
    c="${c//@JSON@/$5}"
    read -r -a ARGV <<<"$c"
}

# run_one MODE GEN REP TEMPLATE DURATION RATE
run_one() {
    local mode="$1" gen="$2" rep="$3" tmpl="$4" dur="$5" rate="$6"
    local tag="$mode-$gen-$rep" json="" before after rc
    [[ "$gen" == loadlab ]] && json="$OUT/$( [[ $mode == closed ]] && echo loadlab || echo "$mode")-$rep.json"
    [[ "$gen" == baseline ]] && json="$OUT/baseline-$rep.json"
    expand "$tmpl" "$CONNS" "$dur" "$rate" "${json:-/dev/null}"
    echo "${ARGV[*]}" >"$OUT/$tag.cmd"
    before="$("${MEASURE[@]}" status "$STATUS_URL")"
    set +e
    taskset -c "$GEN_CPU" /usr/bin/time -o "$OUT/$tag.time" -f '%e %U %S %M' \
        timeout -k 5 "$((dur + GRACE))" "${ARGV[@]}" >"$OUT/$tag.stdout" 2>"$OUT/$tag.stderr"
    rc=$?
    set -e
    sleep 0.2 # let nginx finish the last responses/closes
    after="$("${MEASURE[@]}" status "$STATUS_URL")"
    local extra=(--stdout "$OUT/$tag.stdout")
    [[ -n "$json" ]] && extra+=(--json "$json")
    if ! "${MEASURE[@]}" record --runs "$OUT/runs.jsonl" --mode "$mode" --gen "$gen" --rep "$rep" --rc "$rc" \
        --time-file "$OUT/$tag.time" --before "$before" --after "$after" "${extra[@]}"; then
        failures=$((failures + 1))
        log "$tag failed; its output: $OUT/$tag.stdout $OUT/$tag.stderr"
        tail -n 5 "$OUT/$tag.stderr" >&2 || true
    fi
    sleep "$PAUSE"
}

# children of a pid (needs /proc/PID/task/PID/children, present on common kernels)
child_of() {
    local pid="$1" i c
    for ((i = 0; i < 50; i++)); do
        c="$(cat "/proc/$pid/task/$pid/children" 2>/dev/null | awk '{print $1}')"
        [[ -n "$c" ]] && { echo "$c"; return 0; }
        sleep 0.05
    done
    return 1
}

run_long() {
    local rep=1 tag="long-loadlab-1" json="$OUT/long.json" before after rc tpid lpid spid i
    expand "$LOADLAB_OPEN_CMD" "$CONNS" "$LONG_DURATION" "$LONG_RATE" "$json"
    echo "${ARGV[*]}" >"$OUT/$tag.cmd"
    before="$("${MEASURE[@]}" status "$STATUS_URL")"
    # time -> taskset (execs) -> loadlab: loadlab is the direct child of time
    /usr/bin/time -o "$OUT/$tag.time" -f '%e %U %S %M' \
        taskset -c "$GEN_CPU" "${ARGV[@]}" >"$OUT/$tag.stdout" 2>"$OUT/$tag.stderr" &
    tpid=$!
    BG_PIDS+=("$tpid")
    if lpid="$(child_of "$tpid")"; then
        echo "$lpid" >>"$OUT/bg.pids"
        BG_PIDS+=("$lpid")
        "${MEASURE[@]}" sample-rss "$lpid" "$OUT/rss.csv" &
        spid=$!
        BG_PIDS+=("$spid")
        echo "$spid" >>"$OUT/bg.pids"
        for ((i = 0; i < LONG_DURATION + GRACE; i++)); do
            pid_is "$lpid" loadlab || break
            sleep 1
        done
        if pid_is "$lpid" loadlab; then
            log "long run overran ${LONG_DURATION}+${GRACE}s; terminating it"
            kill -TERM "$lpid" 2>/dev/null || true
        fi
    fi
    set +e
    wait "$tpid"
    rc=$?
    [[ -n "${spid:-}" ]] && wait "$spid"
    set -e
    after="$("${MEASURE[@]}" status "$STATUS_URL")"
    if ! "${MEASURE[@]}" record --runs "$OUT/runs.jsonl" --mode long --gen loadlab --rep "$rep" --rc "$rc" \
        --time-file "$OUT/$tag.time" --before "$before" --after "$after" --json "$json"; then
        failures=$((failures + 1))
        log "$tag failed; its output: $OUT/$tag.stdout $OUT/$tag.stderr"
        tail -n 5 "$OUT/$tag.stderr" >&2 || true
    fi
}

write_meta() {
    {
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "host: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
        echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "pinning: nginx on CPU $NGINX_CPU (1 worker), generator on CPU $GEN_CPU"
        echo "nginx: $("$NGINX_BIN" -v 2>&1 | sed 's/.*: //'); wrk: $(wrk -v 2>&1 | head -n1 | awk '{print $2}')"
        if [[ " ${GEN_LIST[*]} " == *" loadlab "* ]]; then
            echo "loadlab: $("$LOADLAB" --version 2>/dev/null | head -n1 || echo '?'), git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (dirty)')"
        fi
        echo "repetitions: $REPS, interleaved ($(echo "${GEN_LIST[*]}" | sed 's/ /, /g'))"
        for g in "${GEN_LIST[@]}"; do
            case "$g" in
                wrk) expand "$WRK_CMD" "$CONNS" "$DURATION" "$OPEN_RATE" "-" ;;
                loadlab) expand "$LOADLAB_CLOSED_CMD" "$CONNS" "$DURATION" "$OPEN_RATE" "bench/out/loadlab-N.json" ;;
                baseline) expand "$BASELINE_CLOSED_CMD" "$CONNS" "$DURATION" "$OPEN_RATE" "bench/out/baseline-N.json"
                    echo "baseline: $("$BASELINE" --version 2>/dev/null | head -n1 || echo '?')" ;;
            esac
            echo "$g closed: \`${ARGV[*]/#$ROOT\//}\`"
        done
        if ((DO_OPEN)); then
            expand "$LOADLAB_OPEN_CMD" "$CONNS" "$DURATION" "$OPEN_RATE" "bench/out/open-N.json"
            echo "loadlab open: \`${ARGV[*]/#$ROOT\//}\`"
        fi
    } >"$OUT/meta.txt"
}

# ----------------------------------------------------------------------------- main
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer"
read -r -a GEN_LIST <<<"${GENERATORS//,/ }"
((${#GEN_LIST[@]})) || die "GENERATORS is empty"
has_loadlab=0
for g in "${GEN_LIST[@]}"; do
    case "$g" in
        wrk) ;;
        loadlab) has_loadlab=1 ;;
        baseline) [[ -x "$BASELINE" ]] || die "generator baseline needs BASELINE=/path/to/another/loadlab" ;;
        *) die "unknown generator '$g' (known: wrk loadlab baseline)" ;;
    esac
done
DO_OPEN=$((has_loadlab && OPEN != 0))
DO_LONG=$((has_loadlab && LONG != 0))
if ((has_loadlab)); then
    [[ -x "$LOADLAB" ]] || die "$LOADLAB not found: build it (cargo build --release) or run GENERATORS=wrk"
fi
if ((NGINX_CPU == GEN_CPU)) || (($(nproc) < 2)); then
    log "WARNING: nginx and the generator share a CPU ($(nproc) CPUs online); numbers are not comparable to 2-core references"
fi

ensure_tools
kill_leftovers
rm -rf "$OUT"
mkdir -p "$OUT"
: >"$OUT/bg.pids"
trap cleanup EXIT
trap 'exit 130' INT TERM

start_nginx
write_meta

if ((WARMUP > 0)); then
    log "warm-up: ${WARMUP}s of wrk (not measured)"
    taskset -c "$GEN_CPU" timeout 30 wrk -t1 -c"$CONNS" -d"${WARMUP}s" "$URL" >"$OUT/warmup.stdout" 2>&1 || log "warm-up wrk failed"
    sleep "$PAUSE"
fi

log "closed model: ${GEN_LIST[*]} x $REPS reps, ${DURATION}s each, $CONNS connections/VUs"
for ((rep = 1; rep <= REPS; rep++)); do
    for g in "${GEN_LIST[@]}"; do
        case "$g" in
            wrk) run_one closed wrk "$rep" "$WRK_CMD" "$DURATION" "$OPEN_RATE" ;;
            loadlab) run_one closed loadlab "$rep" "$LOADLAB_CLOSED_CMD" "$DURATION" "$OPEN_RATE" ;;
            baseline) run_one closed baseline "$rep" "$BASELINE_CLOSED_CMD" "$DURATION" "$OPEN_RATE" ;;
        esac
    done
done

if ((DO_OPEN)); then
    log "open model: loadlab at ${OPEN_RATE}/s x $REPS reps, ${DURATION}s each"
    for ((rep = 1; rep <= REPS; rep++)); do
        run_one open loadlab "$rep" "$LOADLAB_OPEN_CMD" "$DURATION" "$OPEN_RATE"
    done
fi

rss_args=()
if ((DO_LONG)); then
    log "RSS flatness: loadlab at ${LONG_RATE}/s for ${LONG_DURATION}s, sampling VmRSS every second"
    run_long
    rss_args=(--rss-csv "$OUT/rss.csv" --rss-desc "loadlab open model ${LONG_RATE}/s for ${LONG_DURATION} s"
        --rss-end "$LONG_DURATION" --rss-tolerance "$RSS_TOLERANCE")
fi

echo >&2
"${MEASURE[@]}" report --runs "$OUT/runs.jsonl" --out "$OUT/results.md" --meta "$OUT/meta.txt" \
    --closed-desc "$CONNS connections/VUs, ${DURATION} s, $REPS reps" \
    --open-desc "loadlab ${OPEN_RATE}/s, ${DURATION} s, $REPS reps" "${rss_args[@]}"

if ((failures)); then
    log "$failures run(s) failed; see the 'All runs' table and $OUT/*.stderr"
    exit 1
fi
log "results: $OUT/results.md"
