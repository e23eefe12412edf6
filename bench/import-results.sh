#!/usr/bin/env bash
# How fast `loadlab import-results k6-json` reads a large k6 JSON output, and in how much
# memory: generates a k6 `--out json` file of SIZE_MB (default 1024) in k6's format (every
# request as k6 writes it: http_reqs, http_req_duration, blocked, connecting,
# tls_handshaking, sending, waiting, receiving, http_req_failed points, plus vus and
# iterations), imports it with /usr/bin/time -v, and prints MB/s and the peak RSS beside
# the time `cat` takes to read the same file (the floor).
# FORMAT=jmeter-xml makes and imports a JMeter XML .jtl instead (samples with their URL
# element, one in 100 a Transaction Controller's parent sample holding two).
#   bash bench/import-results.sh            # 1 GB
#   SIZE_MB=100 bash bench/import-results.sh
#   FORMAT=jmeter-xml bash bench/import-results.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MB="${SIZE_MB:-1024}"
FORMAT="${FORMAT:-k6-json}"
WORK="${WORK:-$(mktemp -d)}"
# The CLI when LOADLAB names a release build of it; else the crate's example, which does
# the same work (import, then the summary from the record) without building the whole CLI.
if [ -z "${LOADLAB:-}" ]; then
    cargo build --release --quiet -p loadlab-results-import --example import_file
    EXAMPLE="${CARGO_TARGET_DIR:-target}/release/examples/import_file"
fi
FILE="$WORK/k6-${SIZE_MB}MB.json"
[ "$FORMAT" = jmeter-xml ] && FILE="$WORK/jmeter-${SIZE_MB}MB.jtl"

if [ "$FORMAT" = jmeter-xml ] && [ ! -s "$FILE" ]; then
    python3 - "$FILE" "$SIZE_MB" <<'PY'
import random, sys
path, size_mb = sys.argv[1], int(sys.argv[2])
limit = size_mb * 1024 * 1024
rng = random.Random(1)
start = 1767225600000
labels = ["GET /api/ping", "POST /api/users", "GET /health"]
def sample(ts, label, indent=""):
    t = max(1, int(rng.lognormvariate(1.0, 0.5) * 10))
    ok = rng.random() > 0.001
    return ('%s<httpSample t="%d" it="0" lt="%d" ct="0" ts="%d" s="%s" lb="%s" rc="%s" rm="%s" tn="Thread Group 1-%d" dt="text" by="120" sby="90" ng="50" na="50">\n'
            '%s  <java.net.URL>http://127.0.0.1:8080/%s</java.net.URL>\n%s</httpSample>\n') % (
        indent, t, t * 9 // 10, ts, "true" if ok else "false", label, "200" if ok else "500",
        "OK" if ok else "Internal Server Error", ts % 50 + 1, indent, label.split(" /")[1], indent)
written, i = 0, 0
with open(path, "w") as f:
    f.write('<?xml version="1.0" encoding="UTF-8"?>\n<testResults version="1.2">\n')
    while written < limit:
        ts = start + i // 2
        if i % 100 == 0:
            chunk = ('<sample t="20" it="0" lt="0" ct="0" ts="%d" s="true" lb="Checkout" rc="200" rm="Number of samples in transaction : 2, number of failing samples : 0" tn="Thread Group 1-1" dt="" by="240" sby="180" ng="50" na="50">\n' % ts
                     + sample(ts, labels[0], "  ") + sample(ts + 1, labels[1], "  ") + "</sample>\n")
        else:
            chunk = sample(ts, labels[i % 3])
        f.write(chunk)
        written += len(chunk)
        i += 1
    f.write("</testResults>\n")
print(f"generated {path}: {written / 1e6:.0f} MB", file=sys.stderr)
PY
fi

if [ "$FORMAT" = k6-json ] && [ ! -s "$FILE" ]; then
    python3 - "$FILE" "$SIZE_MB" <<'PY'
import random, sys, datetime
path, size_mb = sys.argv[1], int(sys.argv[2])
limit = size_mb * 1024 * 1024
rng = random.Random(1)
start = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc).timestamp()
names = ["http://127.0.0.1:8080/api/ping", "http://127.0.0.1:8080/api/users", "http://127.0.0.1:8080/health"]
written = 0
with open(path, "w") as f:
    f.write('{"type":"Metric","data":{"name":"http_req_duration","type":"trend","contains":"time","thresholds":[],"submetrics":null},"metric":"http_req_duration"}\n')
    i = 0
    while written < limit:
        t = start + i * 0.0005
        sec = int(t)
        stamp = datetime.datetime.fromtimestamp(sec, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + ".%06d000Z" % int((t - sec) * 1e6)
        name = names[i % 3]
        status = "500" if i % 997 == 0 else "200"
        tags = '{"expected_response":"%s","group":"","method":"GET","name":"%s","proto":"HTTP/1.1","scenario":"default","status":"%s","url":"%s"}' % ("false" if status == "500" else "true", name, status, name)
        d = rng.lognormvariate(1.0, 0.5)
        lines = []
        for metric, value in (("http_reqs", 1), ("http_req_duration", d), ("http_req_blocked", 0.002), ("http_req_connecting", 0.0),
                              ("http_req_tls_handshaking", 0.0), ("http_req_sending", 0.01), ("http_req_waiting", d * 0.95),
                              ("http_req_receiving", d * 0.04), ("http_req_failed", 1 if status == "500" else 0)):
            lines.append('{"metric":"%s","type":"Point","data":{"time":"%s","value":%.6f,"tags":%s}}\n' % (metric, stamp, value, tags))
        if i % 2000 == 0:
            lines.append('{"metric":"vus","type":"Point","data":{"time":"%s","value":50,"tags":{}}}\n' % stamp)
        chunk = "".join(lines)
        f.write(chunk)
        written += len(chunk)
        i += 1
print(f"generated {path}: {written / 1e6:.0f} MB, {i} requests", file=sys.stderr)
PY
fi

bytes=$(stat -c %s "$FILE")
mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')
start=$(date +%s.%N); cat "$FILE" > /dev/null; end=$(date +%s.%N)
cat_s=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
rm -rf "$WORK/store"
mkdir -p "$WORK/store"
if [ -n "${LOADLAB:-}" ]; then
    CMD=("$LOADLAB" import-results "$FORMAT" "$FILE" --name bench --results "$WORK/store" --quiet)
else
    CMD=("$EXAMPLE" "$FORMAT" "$FILE" "$WORK/store/run")
fi
/usr/bin/time -v "${CMD[@]}" > "$WORK/out.txt" 2> "$WORK/time.txt" || { cat "$WORK/time.txt"; exit 1; }
cat "$WORK/out.txt"
wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$WORK/time.txt")
rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/time.txt")
secs=$(awk -v w="$wall" 'BEGIN { n = split(w, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }')
echo "file: $mb MiB ($FILE)"
echo "cat: ${cat_s} s ($(awk -v m="$mb" -v s="$cat_s" 'BEGIN { printf "%.0f", m / s }') MiB/s)"
echo "import-results: ${secs} s, $(awk -v m="$mb" -v s="$secs" 'BEGIN { printf "%.0f", m / s }') MiB/s, peak RSS $(( rss_kb / 1024 )) MiB"
