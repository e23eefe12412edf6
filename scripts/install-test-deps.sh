#!/usr/bin/env sh
# Installs what the test suite needs beyond Rust, with apt-get (Debian/Ubuntu, as root or
# with sudo):
# - Chromium, for the report test that opens the HTML report in a headless browser
#   (crates/report/tests/report_browser.rs);
# - prometheus-node-exporter, a real Prometheus exposition for the monitor's tests
#   (crates/monitor/tests/prometheus.rs starts its own on a free loopback port).
# Idempotent: installs only what is missing.
set -eu

missing=""
if [ ! -x /usr/bin/chromium ]; then
    missing="$missing chromium fonts-dejavu-core"
fi
if [ ! -x /usr/bin/prometheus-node-exporter ]; then
    missing="$missing prometheus-node-exporter"
fi

if [ -z "$missing" ]; then
    echo "install-test-deps: chromium and prometheus-node-exporter already installed"
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
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing

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
