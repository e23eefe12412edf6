#!/usr/bin/env bash
# The validity judgement measured against the target's own view (issue 21): false alarms on a
# quiet machine (20 closed runs, 10 VUs, and 20 open runs, 500/s, 3 s each) and detection with
# CPU hogs pinned to the generator's core, to the other core, and to every core (10 runs each),
# against `loadlab target --workers 16 --service-time 1ms`. Prints the table of
# bench/README.md ("Validity"); every run's figures go to $OUT/validity.jsonl. About 6 minutes.
#
#   bash bench/validity.sh            # QUICK=1 for 5 and 3 runs per case
#   TIMER=1 bash bench/validity.sh    # quiet open runs at 100/400/2000/s on /health: the floor
#                                     # from this host's timer (issue 35), 20 runs each, ~6 min
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-bench/out-validity}"
export OUT
cargo build --release --quiet
python3 bench/validity.py --bin target/release/loadlab ${QUICK:+--quick} ${TIMER:+--timer} \
    ${RUNS:+--runs "$RUNS"} ${RATES:+--rates "$RATES"}
