#!/usr/bin/env bash
# Test dependencies that are not Rust crates: the reference implementations (SciPy,
# statsmodels, kneed) the statistics are checked against, Apache Otava (in a virtual
# environment of its own) for the change points, junitparser for the --junit reports, and
# moto[server], the S3-compatible
# server tests/distributed.rs starts on loopback (python3 -m moto.server), websockets for
# the WebSocket server of tests/websocket.rs, aiohttp for the SSE server of tests/streaming.rs,
# and grpcio for the gRPC server of the gRPC tests. Installs them
# (idempotently: only what is missing or at another version), regenerates the fixtures of
# crates/analysis/tests/fixtures with scripts/stats_reference.py into a scratch directory, and
# fails if they differ from the committed ones beyond a stated tolerance (the Rust tests then
# assert agreement with the committed ones).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"

# Whether PYTHON has every `name==version` pin of the requirements file REQ installed.
pinned() {
    "$1" - "$2" <<'PYEOF' 2>/dev/null
import sys
from importlib.metadata import version
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, want = line.split("==")
    if version(name.split("[")[0]) != want:
        sys.exit(1)
PYEOF
}

# Installs the requirements file REQ with PYTHON (also where pip refuses a system Python).
install() {
    echo "setup-test-deps: installing $2"
    "$1" -m pip install --quiet -r "$2" 2>/dev/null \
        || "$1" -m pip install --quiet --break-system-packages -r "$2"
}

REQ=scripts/requirements-stats.txt

pinned "$PY" "$REQ" || install "$PY" "$REQ"

# junitparser, which tests/history.rs reads the --junit reports with.
JUNIT=scripts/requirements-junit.txt
pinned "$PY" "$JUNIT" || install "$PY" "$JUNIT"

# moto in server mode for the object-storage tests (a real S3 API on 127.0.0.1).
MOTO=scripts/requirements-s3.txt
# The server extra must be there too.
if ! pinned "$PY" "$MOTO" || ! "$PY" -c "import moto.server, flask" 2>/dev/null; then
    install "$PY" "$MOTO"
fi
"$PY" -c "import moto.server" && echo "setup-test-deps: moto server available"

# websockets, the WebSocket server (scripts/ws_server.py) tests/websocket.rs checks counts
# against.
WS=scripts/requirements-ws.txt
pinned "$PY" "$WS" || install "$PY" "$WS"
"$PY" -c "import websockets" && echo "setup-test-deps: websockets available"

# aiohttp, the OpenAI-style SSE server (scripts/sse_server.py) tests/streaming.rs measures
# TTFT and ITL against.
SSE=scripts/requirements-sse.txt
pinned "$PY" "$SSE" || install "$PY" "$SSE"
"$PY" -c "import aiohttp" && echo "setup-test-deps: aiohttp available"

# grpcio (+ reflection, + tools for protoc), the gRPC server (scripts/grpc_server.py) the gRPC
# tests check counts against.
GRPC=scripts/requirements-grpc.txt
pinned "$PY" "$GRPC" || install "$PY" "$GRPC"
"$PY" -c "import grpc, grpc_reflection.v1alpha.reflection, grpc_tools.protoc" \
    && echo "setup-test-deps: grpcio available"

# Regenerated into a scratch directory and compared numerically: the last bits of a float
# depend on the machine (vector unit, BLAS kernel, where an iterative fit stops), so a
# byte-exact diff failed on every machine unlike the one that wrote the fixtures. Each value is
# compared at the tolerance the Rust tests compare loadlab with it at
# (crates/analysis/tests/fixtures/tolerances.json, read by both): the check fails only for a
# difference a test could notice.
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
"$PY" scripts/stats_reference.py --out "$SCRATCH" >/dev/null
if ! "$PY" scripts/compare_fixtures.py crates/analysis/tests/fixtures "$SCRATCH"; then
    echo "setup-test-deps: the SciPy fixtures differ from the committed ones beyond the" \
        "tolerance (lines above); regenerate them with python3 scripts/stats_reference.py" >&2
    exit 1
fi
echo "setup-test-deps: SciPy fixtures reproduced (within scripts/compare_fixtures.py's tolerance)"

# Apache Otava, the reference for the change-point detector, in a virtual environment of its
# own (it pins NumPy 2.2 / SciPy 1.16, older than requirements-stats.txt). Its fixtures are
# regenerated and compared like the SciPy ones.
OTAVA_REQ=scripts/requirements-otava.txt
OTAVA_VENV="${LOADLAB_OTAVA_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/loadlab/otava-venv}"
OTAVA_PY="$OTAVA_VENV/bin/python"
if ! pinned "$OTAVA_PY" "$OTAVA_REQ"; then
    echo "setup-test-deps: making $OTAVA_VENV"
    "$PY" -m venv "$OTAVA_VENV"
    install "$OTAVA_PY" "$OTAVA_REQ"
fi
OTAVA_SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH" "$OTAVA_SCRATCH"' EXIT
"$OTAVA_PY" scripts/otava_reference.py --out "$OTAVA_SCRATCH" >/dev/null
if ! "$PY" scripts/compare_fixtures.py crates/analysis/tests/fixtures/otava "$OTAVA_SCRATCH"; then
    echo "setup-test-deps: the Otava fixtures differ from the committed ones beyond the" \
        "tolerance (lines above); regenerate them with $OTAVA_PY scripts/otava_reference.py" >&2
    exit 1
fi
echo "setup-test-deps: Otava change-point fixtures reproduced"
