#!/usr/bin/env bash
# The whole test suite, with everything it needs installed first (README's second command,
# run by .ci/run): SciPy reference fixtures regenerated and checked, Chromium for the browser
# test of the HTML report and prometheus-node-exporter for the monitor's tests, then every
# Rust test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-test-deps.sh
sh scripts/install-test-deps.sh
# vegeta and oha, whose real outputs tests/import_results_tools.rs imports (cached builds).
sh scripts/install-load-tools.sh
cargo test --workspace --no-fail-fast "$@"
