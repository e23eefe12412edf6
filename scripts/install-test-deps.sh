#!/usr/bin/env sh
# Installs what the test suite needs beyond Rust, with apt-get (Debian/Ubuntu, as root or
# with sudo):
# - Chromium, for the report test that opens the HTML report in a headless browser
#   (crates/report/tests/report_browser.rs) and the import test that records a HAR with it
#   (tests/import.rs, through scripts/record_har.py);
# - prometheus-node-exporter, a real Prometheus exposition for the monitor's tests
#   (crates/monitor/tests/prometheus.rs starts its own on a free loopback port);
# - prometheus (Debian's 2.42), the real remote-write receiver of the live outputs' test
#   (tests/live_prometheus.rs starts its own on a free loopback port);
# - nginx (with http2 and stub_status) for the HTTP/2 tests against a real server
#   (tests/http2.rs starts its own on free loopback ports), and nghttp2-client (h2load, the
#   peer of bench/h2.sh).
# Idempotent: installs only what is missing.
set -eu

missing=""
if [ ! -x /usr/bin/chromium ]; then
    missing="$missing chromium fonts-dejavu-core"
fi
if [ ! -x /usr/bin/prometheus-node-exporter ]; then
    missing="$missing prometheus-node-exporter"
fi
if [ ! -x /usr/bin/prometheus ]; then
    missing="$missing prometheus"
fi
if [ ! -x /usr/sbin/nginx ]; then
    missing="$missing nginx-light"
fi
if [ ! -x /usr/bin/h2load ]; then
    missing="$missing nghttp2-client"
fi

# Opt-in (LOADLAB_OTLP_PROMETHEUS=1): a Prometheus with an OTLP receiver (2.54.1, Debian's 2.42
# has none) built from the Go module proxy, for tests/live_prometheus.rs's OTLP test (run it
# with LOADLAB_TEST_PROMETHEUS_OTLP=<printed path>). Cached: building it took 42 minutes on a
# contended 2-core machine and needs about 1.3 GB of Go modules, too much for every CI run.
if [ "${LOADLAB_OTLP_PROMETHEUS:-0}" = "1" ]; then
    CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/loadlab-test-deps"
    BIN="$CACHE/prometheus-2.54.1"
    if [ ! -x "$BIN" ]; then
        command -v go >/dev/null 2>&1 || { echo "install-test-deps: Go is needed to build Prometheus 2.54.1" >&2; exit 1; }
        mkdir -p "$CACHE"
        # `go install` refuses a module with replace directives: build inside the module.
        dir=$(go mod download -json github.com/prometheus/prometheus@v0.54.1 | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
        (cd "$dir" && go build -o "$BIN" ./cmd/prometheus)
    fi
    echo "install-test-deps: LOADLAB_TEST_PROMETHEUS_OTLP=$BIN"
fi

if [ -z "$missing" ]; then
    echo "install-test-deps: chromium, prometheus-node-exporter, prometheus, nginx and h2load already installed"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-test-deps: no apt-get here; install by hand:$missing" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then
    SUDO="sudo"
fi

echo "install-test-deps: installing$missing (apt-get)"
$SUDO apt-get update -q
# shellcheck disable=SC2086 # the package list is meant to split
if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing; then
    # Distributions without the nginx-light flavour have plain nginx.
    missing=$(echo "$missing" | sed 's/nginx-light/nginx/')
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
fi

case "$missing" in
*nginx*)
    # The package may start a system-wide nginx on :80; the tests start their own.
    if command -v systemctl >/dev/null 2>&1; then
        $SUDO systemctl disable --now nginx >/dev/null 2>&1 || true
    fi
    ;;
esac
case "$missing" in
*" prometheus"*)
    # The package enables a system-wide Prometheus on :9090; the tests start their own.
    if command -v systemctl >/dev/null 2>&1; then
        $SUDO systemctl disable --now prometheus >/dev/null 2>&1 || true
    fi
    ;;
esac
case "$missing" in
*prometheus-node-exporter*)
    # The package enables a system-wide exporter on :9100; the tests start their own, so
    # the one just installed is stopped rather than left running.
    if command -v systemctl >/dev/null 2>&1; then
        $SUDO systemctl disable --now prometheus-node-exporter >/dev/null 2>&1 || true
    fi
    ;;
esac
/usr/bin/chromium --version
/usr/bin/prometheus-node-exporter --version 2>&1 | head -1
/usr/bin/prometheus --version 2>&1 | head -1
/usr/sbin/nginx -v 2>&1
h2load --version 2>&1 | head -1

