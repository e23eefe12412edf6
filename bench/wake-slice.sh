#!/usr/bin/env bash
# The wake-up lateness of a sleeper sharing its core with a CPU hog, default time slice against
# the 100 µs slice loadlab's workers ask for (EEVDF, Linux >= 6.12), REPS alternating runs of
# 2,000 sleeps each; prints each run and the medians of p99 and max. Needs a C compiler.
set -euo pipefail
REPS=${REPS:-5}
bin=$(mktemp -d)/wake-slice
cc -O2 -pthread -o "$bin" "$(dirname "$0")/wake-slice.c"
uname -r
for _ in $(seq "$REPS"); do
  "$bin" 0 1
  "$bin" 1 1
done | tee /dev/stderr | awk '
  { split($1, s, "="); p99[s[2]] = p99[s[2]] " " $9; mx[s[2]] = mx[s[2]] " " $11 }
  function med(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return a[int((n + 1) / 2)]
  }
  END {
    printf "median p99: default slice %s us, short slice %s us\n", med(p99[0]), med(p99[1])
    printf "median max: default slice %s us, short slice %s us\n", med(mx[0]), med(mx[1])
  }'
