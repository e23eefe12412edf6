#!/usr/bin/env sh
# Installs what the test suite needs beyond Rust: Chromium, for the report test that opens
# the HTML report in a headless browser (tests in crates/report/tests/report_browser.rs).
# Idempotent: does nothing when /usr/bin/chromium exists. Debian/Ubuntu (apt-get), as root
# or with sudo.
set -eu

if [ -x /usr/bin/chromium ]; then
    echo "install-test-deps: chromium already installed ($(/usr/bin/chromium --version 2>/dev/null || echo unknown version))"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-test-deps: no apt-get here; install Chromium by hand so that /usr/bin/chromium exists" >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then
    SUDO="sudo"
fi

echo "install-test-deps: installing chromium (apt-get)"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
/usr/bin/chromium --version
