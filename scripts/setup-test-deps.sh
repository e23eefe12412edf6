#!/usr/bin/env bash
# Test dependencies that are not Rust crates: the reference implementations (SciPy,
# statsmodels, kneed) the statistics are checked against. Installs them, regenerates the
# fixtures in crates/analysis/tests/fixtures with scripts/stats_reference.py, and fails if
# they differ from the committed ones (the Rust tests then assert agreement with them).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
REQ=scripts/requirements-stats.txt

if ! "$PY" - "$REQ" <<'PYEOF' 2>/dev/null
import sys
from importlib.metadata import version
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, want = line.split("==")
    if version(name) != want:
        sys.exit(1)
PYEOF
then
    echo "setup-test-deps: installing $REQ"
    "$PY" -m pip install --quiet -r "$REQ" 2>/dev/null \
        || "$PY" -m pip install --quiet --break-system-packages -r "$REQ"
fi

"$PY" scripts/stats_reference.py
if ! git diff --exit-code -- crates/analysis/tests/fixtures \
    || [ -n "$(git status --porcelain -- crates/analysis/tests/fixtures)" ]; then
    echo "setup-test-deps: the SciPy fixtures differ from the committed ones (see the diff above)" >&2
    exit 1
fi
echo "setup-test-deps: SciPy fixtures reproduced"
