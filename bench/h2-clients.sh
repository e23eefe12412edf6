#!/usr/bin/env bash
# Which HTTP/2 client costs less CPU per request: the purpose-built h2wire client (`wire`, and
# `wire-mt` on a one-worker multi-thread runtime), the `h2` crate driven directly as the engine
# does (`h2`, `h2-mt`), both in crates/engine/examples/h2_clients.rs (the same request loop),
# hyper (`hyper`, on request) and h2load (nghttp2), interleaved against a pinned nginx speaking
# h2c, the order reversed every other repetition. CPU is user+sys from /usr/bin/time for every
# client. Prints per-setting medians and per-repetition ratios to h2load; see bench/README.md.
# Usage: bash bench/h2-clients.sh  (REPS=5 DURATION=5 SETTINGS="1x100 10x10" CLIENTS="...")
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
OUT="$BENCH_DIR/out/h2-clients"
REPS="${REPS:-5}"
SETTINGS="${SETTINGS:-1x100 10x10}"
DURATION="${DURATION:-5}"
CLIENTS="${CLIENTS:-wire wire-mt h2 h2-mt h2load}"
NGINX_CPU="${NGINX_CPU:-0}"
GEN_CPU="${GEN_CPU:-1}"
PORT="${PORT:-18084}"
EXAMPLE="$ROOT/target/release/examples/h2_clients"

# shellcheck source=bench/lib.sh
source "$BENCH_DIR/lib.sh"

command -v nginx >/dev/null 2>&1 || [[ -x /usr/sbin/nginx ]] || install_missing nginx-light
command -v h2load >/dev/null 2>&1 || install_missing nghttp2-client
NGINX_BIN="$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)"
(cd "$ROOT" && cargo build --release -q -p loadlab-engine --example h2_clients)
stop_nginx
rm -rf "$OUT"
mkdir -p "$OUT/nginx"
trap stop_nginx EXIT
cat >"$OUT/nginx.conf" <<CONF
worker_processes 1;
worker_cpu_affinity $(cpu_mask "$NGINX_CPU");
pid $OUT/nginx.pid;
error_log $OUT/nginx-error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 10000000;
    http2_max_concurrent_streams 128;
    client_body_temp_path $OUT/nginx/cb;
    proxy_temp_path $OUT/nginx/p;
    fastcgi_temp_path $OUT/nginx/f;
    uwsgi_temp_path $OUT/nginx/u;
    scgi_temp_path $OUT/nginx/s;
    server { listen 127.0.0.1:$PORT http2; location / { return 200 "ok"; } }
}
CONF
port_free "$PORT" || die "127.0.0.1:$PORT is in use; set PORT"
taskset -c "$NGINX_CPU" "$NGINX_BIN" -p "$OUT/nginx/" -c "$OUT/nginx.conf" -e "$OUT/nginx-error.log"
sleep 0.5
log "HTTP/2 clients ($CLIENTS): $REPS reps × ${DURATION}s, settings $SETTINGS, load average $(cut -d' ' -f1-3 /proc/loadavg)"
read -r -a forward <<<"$CLIENTS"
backward=()
for ((i = ${#forward[@]} - 1; i >= 0; i--)); do backward+=("${forward[i]}"); done
URL="http://127.0.0.1:$PORT/"
for ((rep = 1; rep <= REPS; rep++)); do
    for setting in $SETTINGS; do
        c="${setting%x*}" m="${setting#*x}"
        if ((rep % 2)); then order=("${forward[@]}"); else order=("${backward[@]}"); fi
        for client in "${order[@]}"; do
            if [[ "$client" == h2load ]]; then
                taskset -c "$GEN_CPU" /usr/bin/time -f '%e %U %S' -o "$OUT/time.txt" \
                    h2load -c "$c" -m "$m" -t 1 -D "$DURATION" "$URL" >"$OUT/h2load.txt" 2>&1
                requests="$(awk '/^requests:/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^succeeded/) print $i }' "$OUT/h2load.txt")"
            else
                taskset -c "$GEN_CPU" /usr/bin/time -f '%e %U %S' -o "$OUT/time.txt" \
                    "$EXAMPLE" "$client" "$URL" "$c" "$m" "$DURATION" >"$OUT/example.txt"
                requests="$(sed -n 's/.* requests=\([0-9]*\).*/\1/p' "$OUT/example.txt")"
            fi
            read -r wall user sys <"$OUT/time.txt"
            echo "rep=$rep setting=$setting client=$client requests=$requests wall=$wall user=$user sys=$sys load=$(cut -d' ' -f1 /proc/loadavg)" \
                | tee -a "$OUT/runs.txt"
            sleep 1
        done
    done
done
log "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$OUT/runs.txt" <<'PY'
import statistics, sys
runs = [dict(kv.split("=") for kv in line.split()) for line in open(sys.argv[1]) if line.strip()]
for r in runs:
    r["us"] = (float(r["user"]) + float(r["sys"])) / int(r["requests"]) * 1e6
clients = list(dict.fromkeys(r["client"] for r in runs))
print("\n| connections × streams | " + " | ".join(f"{c} µs/req" for c in clients)
      + " | " + " | ".join(f"{c} / h2load" for c in clients if c != "h2load") + " |")
print("|---" * (1 + 2 * len(clients) - 1) + "|")
per_rep = []
for setting in dict.fromkeys(r["setting"] for r in runs):
    rs = [r for r in runs if r["setting"] == setting]
    by = {(r["client"], r["rep"]): r for r in rs}
    med = {c: statistics.median(r["us"] for r in rs if r["client"] == c) for c in clients}
    cells = [f"{med[c]:.2f}" for c in clients]
    for c in clients:
        if c == "h2load":
            continue
        ratios = [by[(c, k)]["us"] / by[("h2load", k)]["us"] for (cc, k) in by if cc == c and ("h2load", k) in by]
        if ratios:
            cells.append(f"**{statistics.median(ratios):.2f}×**")
            per_rep.append(f"{setting} {c}/h2load per rep: " + ", ".join(f"{x:.2f}" for x in ratios))
        else:
            cells.append("–")
    print(f"| {setting} | " + " | ".join(cells) + " |")
print()
for line in per_rep:
    print(line)
print("\nuser/sys s per run (median):")
for setting in dict.fromkeys(r["setting"] for r in runs):
    for c in clients:
        rs = [r for r in runs if r["setting"] == setting and r["client"] == c]
        print(f"  {setting} {c}: user {statistics.median(float(r['user']) for r in rs):.2f} sys {statistics.median(float(r['sys']) for r in rs):.2f} requests {statistics.median(int(r['requests']) for r in rs):.0f}")
PY
