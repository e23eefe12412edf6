#!/usr/bin/env python3
"""Compares regenerated SciPy fixtures with the committed ones, numerically.

Floating-point results agree across machines only to within a few ulps: the last bits depend
on the CPU's vector unit and the BLAS kernel NumPy/SciPy picked (a fresh machine gave
0.5999999999999995 where the committed fixture has 0.5999999999999994). So numbers are equal
when they agree to REL_TOL relative or ABS_TOL absolute; everything else (keys, list lengths,
strings, booleans, integers that are counts, nulls) must be identical. The Rust tests compare
loadlab with these fixtures within their own, wider tolerances (1e-6 relative and coarser), so
a difference this tolerance lets through can never change a test's outcome.

    python3 scripts/compare_fixtures.py COMMITTED_DIR REGENERATED_DIR

Exit 0 when every file agrees, 1 with one line per difference (file, JSON path, both values).
"""

import json
import math
import os
import sys

REL_TOL = 1e-9
ABS_TOL = 1e-12


def numbers_agree(a, b):
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def differences(committed, regenerated, path="$"):
    """Yields (json_path, committed, regenerated) for every disagreement."""
    if isinstance(committed, bool) or isinstance(regenerated, bool):
        if committed is not regenerated:
            yield path, committed, regenerated
    elif isinstance(committed, (int, float)) and isinstance(regenerated, (int, float)):
        if isinstance(committed, int) and isinstance(regenerated, int):
            if committed != regenerated:
                yield path, committed, regenerated
        elif not numbers_agree(float(committed), float(regenerated)):
            yield path, committed, regenerated
    elif isinstance(committed, dict) and isinstance(regenerated, dict):
        for key in sorted(set(committed) | set(regenerated)):
            if key not in committed or key not in regenerated:
                yield f"{path}.{key}", committed.get(key, "<absent>"), regenerated.get(key, "<absent>")
            else:
                yield from differences(committed[key], regenerated[key], f"{path}.{key}")
    elif isinstance(committed, list) and isinstance(regenerated, list):
        if len(committed) != len(regenerated):
            yield f"{path}.length", len(committed), len(regenerated)
        for i, (c, r) in enumerate(zip(committed, regenerated)):
            yield from differences(c, r, f"{path}[{i}]")
    elif committed != regenerated:
        yield path, committed, regenerated


def compare_dirs(committed_dir, regenerated_dir):
    """Returns the list of difference lines between two fixture directories."""
    lines = []
    committed = sorted(n for n in os.listdir(committed_dir) if n.endswith(".json"))
    regenerated = sorted(n for n in os.listdir(regenerated_dir) if n.endswith(".json"))
    for name in sorted(set(committed) ^ set(regenerated)):
        where = "committed only" if name in committed else "regenerated only"
        lines.append(f"{name}: {where}")
    for name in sorted(set(committed) & set(regenerated)):
        with open(os.path.join(committed_dir, name), encoding="utf-8") as fh:
            old = json.load(fh)
        with open(os.path.join(regenerated_dir, name), encoding="utf-8") as fh:
            new = json.load(fh)
        for path, a, b in differences(old, new):
            lines.append(f"{name}: {path}: committed {a!r}, regenerated {b!r}")
    return lines


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        print("usage: compare_fixtures.py COMMITTED_DIR REGENERATED_DIR", file=sys.stderr)
        return 2
    lines = compare_dirs(argv[1], argv[2])
    for line in lines:
        print(line)
    if lines:
        print(f"compare_fixtures: {len(lines)} difference(s) beyond {REL_TOL:g} relative / "
              f"{ABS_TOL:g} absolute", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
