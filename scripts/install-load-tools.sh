#!/usr/bin/env sh
# Installs the load testers whose result files `loadlab import-results` reads and whose real
# outputs tests/import_results.rs makes against the built-in target: vegeta (from the Go
# module proxy) and oha (from crates.io), both pinned, and h2spec's HTTP/2 client suite
# (h2specd, below), into a cache shared by later runs:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/loadlab-test-deps/bin/{vegeta,oha,h2specd}
# The tests find them there (or through LOADLAB_TEST_VEGETA / LOADLAB_TEST_OHA).
# Building oha from source takes minutes on a busy 2-core machine (measured: see
# docs/import-results.md), so a cached binary is kept and reused. Idempotent.
set -eu

VEGETA_VERSION=v12.13.0
OHA_VERSION=1.16.0
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/loadlab-test-deps"
BIN="$CACHE/bin"
mkdir -p "$BIN"

if [ ! -x "$BIN/vegeta" ] || ! "$BIN/vegeta" -version 2>/dev/null | grep -q "${VEGETA_VERSION#v}"; then
    command -v go >/dev/null 2>&1 || { echo "install-load-tools: Go is needed to install vegeta" >&2; exit 1; }
    echo "install-load-tools: installing vegeta $VEGETA_VERSION"
    # The version is stamped as the release builds stamp it, so `vegeta -version` names it.
    GOBIN="$BIN" go install -ldflags "-X main.Version=$VEGETA_VERSION" "github.com/tsenart/vegeta/v12@$VEGETA_VERSION"
fi

if [ ! -x "$BIN/oha" ] || ! "$BIN/oha" --version 2>/dev/null | grep -q "$OHA_VERSION"; then
    command -v cargo >/dev/null 2>&1 || { echo "install-load-tools: cargo is needed to install oha" >&2; exit 1; }
    echo "install-load-tools: installing oha $OHA_VERSION (a few minutes: it is compiled)"
    start=$(date +%s)
    cargo install --quiet --locked --version "$OHA_VERSION" --root "$CACHE/oha-root" oha
    cp "$CACHE/oha-root/bin/oha" "$BIN/oha"
    echo "install-load-tools: oha built in $(( $(date +%s) - start )) s"
fi
# h2spec's suite for HTTP/2 clients (scripts/h2specd: a small harness around its library, from
# the Go module proxy, pinned by go.sum), which crates/engine/tests/h2spec_client.rs runs.
H2SPECD_VERSION="h2spec v2.2.1, harness 1"
if [ ! -x "$BIN/h2specd" ] || [ "$("$BIN/h2specd" -version 2>/dev/null)" != "$H2SPECD_VERSION" ]; then
    command -v go >/dev/null 2>&1 || { echo "install-load-tools: Go is needed to build h2specd" >&2; exit 1; }
    echo "install-load-tools: building h2specd ($H2SPECD_VERSION)"
    (cd "$(dirname "$0")/h2specd" && GOFLAGS=-mod=readonly go build -o "$BIN/h2specd" .)
fi
echo "install-load-tools: vegeta, oha and h2specd in $BIN"
