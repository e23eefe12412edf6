#!/usr/bin/env python3
"""Groups a `perf report --no-children --sort symbol --stdio` by where the time goes
(kernel, the `h2` crate, allocator, copies, bytes, tokio, loadlab, ...), so that profiles of
different generators or settings can be set side by side in bench/README.md.

    perf report -i perf.data --no-children --sort symbol --stdio | python3 bench/perf_groups.py
"""
import collections
import re
import sys

GROUPS = [
    ("kernel", lambda k, s: k == "k"),
    ("h2 crate", lambda k, s: s.startswith("h2::") or "<h2::" in s),
    ("allocator", lambda k, s: re.search(r"malloc|_int_free|\bfree\b|realloc|cfree", s)),
    ("memmove/memcpy", lambda k, s: re.search(r"memmove|memcpy|memset", s)),
    ("bytes", lambda k, s: "bytes::" in s),
    ("http/HeaderMap", lambda k, s: re.search(r"^http::|<http::|indexmap|hash_one", s)),
    ("tokio", lambda k, s: "tokio" in s),
    ("hdrhistogram", lambda k, s: "hdrhistogram" in s),
    ("clock", lambda k, s: "clock_gettime" in s or "Timespec" in s),
    ("loadlab", lambda k, s: "loadlab" in s),
]


def main():
    totals = collections.Counter()
    for line in sys.stdin:
        m = re.match(r"\s+([0-9.]+)%\s+\[(.)\]\s+(.*?)(\s{2,}|$)", line)
        if not m:
            continue
        share, kind, symbol = float(m.group(1)), m.group(2), m.group(3)
        group = next((name for name, test in GROUPS if test(kind, symbol)), "other")
        totals[group] += share
    for group, share in totals.most_common():
        print(f"{share:6.1f}%  {group}")


if __name__ == "__main__":
    main()
