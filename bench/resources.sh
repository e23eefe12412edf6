#!/usr/bin/env bash
# What issue 10's evidence costs the generator, measured in real runs: reading `Server-Timing`
# from every response (CPU µs per request with and without), and the resource monitor beside
# the load (CPU % of a core with the default host monitoring against `monitor: {host: false}`,
# and the monitor's own figure from the run JSON).
#
# First the header read alone (a micro-benchmark of the client's header loop, ns per response),
# then real runs: nginx (1 worker, pinned to CPU 0) answers `ok` with `Server-Timing: app;dur=1.234`; loadlab
# runs a closed model (50 VUs) under `taskset -c 1`; the three variants are interleaved and
# repeated, medians are printed. CPU is user + sys of the loadlab process (/usr/bin/time).
#
#   bash bench/resources.sh                 # 5 repetitions of 10 s per variant
#   REPS=7 DURATION=20 bash bench/resources.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
OUT="$ROOT/bench/out-resources"
REPS="${REPS:-5}"
DURATION="${DURATION:-10}"
VUS="${VUS:-50}"
PORT="${PORT:-18090}"
LOADLAB="${LOADLAB:-$ROOT/target/release/loadlab}"

command -v nginx >/dev/null 2>&1 || [[ -x /usr/sbin/nginx ]] || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx >/dev/null
}
[[ -x /usr/bin/time ]] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends time >/dev/null
[[ -x "$LOADLAB" ]] || cargo build --release -q

echo "== the header loop of one response (crates/metrics/examples/server_timing_cost.rs)"
cargo run --release -q -p loadlab-metrics --example server_timing_cost
echo
echo "== real runs: $REPS × 3 variants of ${DURATION}s, closed model, $VUS VUs"
rm -rf "$OUT" && mkdir -p "$OUT"
cat > "$OUT/nginx.conf" <<EOF
worker_processes 1;
worker_cpu_affinity 01;
pid $OUT/nginx.pid;
error_log $OUT/nginx-error.log;
events { worker_connections 1024; }
http {
    access_log off;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$PORT;
        location / { add_header Server-Timing "app;dur=1.234" always; return 200 "ok"; }
    }
}
EOF
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
taskset -c 0 "$NGINX" -c "$OUT/nginx.conf" -p "$OUT"
trap '"$NGINX" -c "$OUT/nginx.conf" -p "$OUT" -s stop 2>/dev/null || true' EXIT
sleep 0.5

scenario() { # name, extra YAML
    cat > "$OUT/$1.yaml" <<EOF
name: $1
target: http://127.0.0.1:$PORT
load: { model: closed, vus: $VUS, duration: ${DURATION}s }
$2
steps: [ { get: / } ]
EOF
}
scenario server-timing ""
scenario no-header "defaults: { server_latency_header: none }"
scenario no-monitor "monitor: { host: false }"

for rep in $(seq 1 "$REPS"); do
    for v in server-timing no-header no-monitor; do
        /usr/bin/time -f '%e %U %S' -o "$OUT/$v-$rep.time" \
            taskset -c 1 "$LOADLAB" run "$OUT/$v.yaml" --quiet --allow-saturated \
            --results "$OUT/results" --json "$OUT/$v-$rep.json" || true
        sleep 1
    done
done

python3 - "$OUT" "$REPS" <<'PY'
import json, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
rows = {}
for v in ["server-timing", "no-header", "no-monitor"]:
    us, cpu, mon, rate = [], [], [], []
    for rep in range(1, reps + 1):
        try:
            wall, user, sys_ = map(float, open(f"{out}/{v}-{rep}.time").read().split()[-3:])
            r = json.load(open(f"{out}/{v}-{rep}.json"))
        except (OSError, ValueError):
            continue
        n = r["requests"]["total"] + r["requests"]["warmup"]
        if n == 0:
            continue
        us.append((user + sys_) / n * 1e6)
        cpu.append(100 * (user + sys_) / wall)
        rate.append(n / wall)
        m = (r.get("resources") or {}).get("monitor_cpu_percent")
        if m is not None:
            mon.append(m)
        if v == "server-timing":
            assert r["steps"][0].get("server_latency_ms", {}).get("count", 0) > 0, "Server-Timing not read"
    rows[v] = {
        "us": statistics.median(us), "cpu": statistics.median(cpu),
        "rate": statistics.median(rate), "mon": statistics.median(mon) if mon else None,
        "n": len(us),
    }
print(f"{'variant':<14} {'runs':>4} {'req/s':>9} {'CPU µs/req':>11} {'CPU % core':>11} {'monitor %':>10}")
for v, r in rows.items():
    mon = f"{r['mon']:.2f}" if r["mon"] is not None else "-"
    print(f"{v:<14} {r['n']:>4} {r['rate']:>9.0f} {r['us']:>11.2f} {r['cpu']:>11.1f} {mon:>10}")
st, none, nomon = rows["server-timing"], rows["no-header"], rows["no-monitor"]
d = st["us"] - none["us"]
print(f"\nreading Server-Timing: {d:+.2f} µs per request ({100 * d / none['us']:+.1f}%)")
print(f"host monitoring in a real run: {st['cpu'] - nomon['cpu']:+.2f}% of a core (process CPU, with − without);"
      f" the monitor's own threads: {st['mon']:.2f}% of a core (run JSON)")
PY
