#!/usr/bin/env bash
# Which HTTP/2 client library costs less CPU per request: the `h2` crate driven directly (as the
# engine does) or hyper's HTTP/2 client, both in crates/engine/examples/h2_clients.rs (the same
# request loop, one current-thread runtime), interleaved against a pinned nginx speaking h2c.
# Prints the medians; see bench/README.md. Usage: bash bench/h2-clients.sh  (REPS=5 SETTINGS=...)
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
OUT="$BENCH_DIR/out/h2-clients"
REPS="${REPS:-5}"
SETTINGS="${SETTINGS:-1x100 10x10}"
DURATION="${DURATION:-5}"
NGINX_CPU="${NGINX_CPU:-0}"
GEN_CPU="${GEN_CPU:-1}"
PORT="${PORT:-18084}"
EXAMPLE="$ROOT/target/release/examples/h2_clients"

# shellcheck source=bench/lib.sh
source "$BENCH_DIR/lib.sh"

command -v nginx >/dev/null 2>&1 || [[ -x /usr/sbin/nginx ]] || install_missing nginx-light
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
log "h2 vs hyper: $REPS reps × ${DURATION}s, settings $SETTINGS, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for ((rep = 1; rep <= REPS; rep++)); do
    for setting in $SETTINGS; do
        if ((rep % 2)); then order=(h2 hyper); else order=(hyper h2); fi
        for client in "${order[@]}"; do
            taskset -c "$GEN_CPU" "$EXAMPLE" "$client" "http://127.0.0.1:$PORT/" "${setting%x*}" "${setting#*x}" "$DURATION" \
                | sed "s/^/rep=$rep setting=$setting /" | tee -a "$OUT/runs.txt"
            sleep 1
        done
    done
done
python3 - "$OUT/runs.txt" <<'PY'
import re, statistics, sys
runs = [dict(kv.split("=") for kv in line.split()) for line in open(sys.argv[1]) if line.strip()]
print("\n| connections × streams | h2 CPU µs/req | hyper CPU µs/req | hyper / h2 (median of pairs) | spread |")
print("|---|---|---|---|---|")
for setting in dict.fromkeys(r["setting"] for r in runs):
    rs = [r for r in runs if r["setting"] == setting]
    cost = lambda c: [float(r["cpu_us_per_req"]) for r in rs if r["client"] == c]
    by = {(r["client"], r["rep"]): float(r["cpu_us_per_req"]) for r in rs}
    ratios = [by[("hyper", k)] / by[("h2", k)] for (c, k) in by if c == "h2" and ("hyper", k) in by]
    print(f"| {setting} | {statistics.median(cost('h2')):.2f} | {statistics.median(cost('hyper')):.2f} "
          f"| {statistics.median(ratios):.2f}× | {min(ratios):.2f}–{max(ratios):.2f} |")
PY
