#!/usr/bin/env python3
"""Compares regenerated SciPy fixtures with the committed ones, numerically.

Floating-point results agree across machines only to within a tolerance: the last bits depend
on the CPU's vector unit and the BLAS kernel NumPy/SciPy picked (a fresh machine gave
0.5999999999999995 where the committed fixture has 0.5999999999999994), and iterative fits
(curve_fit) stop at other digits on other processors. So a number is reproduced when it agrees
with the committed one within the tolerance the Rust tests compare loadlab with it at: the
rules of tolerances.json (found in COMMITTED_DIR or a folder above it), which the tests read
too. The check therefore fails exactly when this machine's SciPy differs from a committed value
by more than the tests allow loadlab to, never for a difference no test could notice.
Everything else (keys, list lengths, strings, booleans, integers that are counts, nulls) must
be identical.

    python3 scripts/compare_fixtures.py COMMITTED_DIR REGENERATED_DIR

Exit 0 when every file agrees, 1 with one line per difference (file, JSON path, both values).
"""

import json
import os
import sys

TOLERANCES = "tolerances.json"


class Rule:
    """One tolerance rule of tolerances.json: `scaled` (|d| <= s * max(1, |expected|), the Rust
    tests' assert_close) or `relative` + `absolute` (|d| <= r * |expected| + a)."""

    def __init__(self, spec):
        self.scaled = spec.get("scaled")
        self.relative = spec.get("relative", 0.0)
        self.absolute = spec.get("absolute", 0.0)
        if self.scaled is None and "relative" not in spec:
            raise ValueError(f"{TOLERANCES}: a rule needs `scaled` or `relative`: {spec}")

    def allows(self, expected, got):
        d = abs(got - expected)
        if self.scaled is not None:
            return d <= self.scaled * max(1.0, abs(expected))
        return d <= self.relative * abs(expected) + self.absolute

    def __str__(self):
        if self.scaled is not None:
            return f"{self.scaled:g} scaled"
        return f"{self.relative:g} relative + {self.absolute:g} absolute"


class FileRules:
    """The rules for one fixture file: its own (or the default), and per key name."""

    def __init__(self, default, spec):
        own = {k: v for k, v in spec.items() if k in ("scaled", "relative", "absolute")}
        self.rule = Rule(own) if own else default
        self.keys = {k: Rule(v) for k, v in spec.get("keys", {}).items()}

    def for_path(self, path):
        key = path.rsplit(".", 1)[-1].split("[", 1)[0]
        return self.keys.get(key, self.rule)


def load_tolerances(committed_dir):
    """(root, default rule, {file path relative to root: spec}) from the nearest tolerances.json
    at or above COMMITTED_DIR."""
    here = os.path.abspath(committed_dir)
    while True:
        candidate = os.path.join(here, TOLERANCES)
        if os.path.isfile(candidate):
            with open(candidate, encoding="utf-8") as fh:
                spec = json.load(fh)
            return here, Rule(spec["default"]), spec.get("files", {})
        parent = os.path.dirname(here)
        if parent == here:
            raise SystemExit(f"compare_fixtures: no {TOLERANCES} at or above {committed_dir}")
        here = parent


def differences(committed, regenerated, rules, path="$"):
    """Yields (json_path, committed, regenerated, rule) for every disagreement."""
    if isinstance(committed, bool) or isinstance(regenerated, bool):
        if committed is not regenerated:
            yield path, committed, regenerated, None
    elif isinstance(committed, (int, float)) and isinstance(regenerated, (int, float)):
        if isinstance(committed, int) and isinstance(regenerated, int):
            if committed != regenerated:
                yield path, committed, regenerated, None
        else:
            rule = rules.for_path(path)
            if not rule.allows(float(committed), float(regenerated)):
                yield path, committed, regenerated, rule
    elif isinstance(committed, dict) and isinstance(regenerated, dict):
        for key in sorted(set(committed) | set(regenerated)):
            if key not in committed or key not in regenerated:
                yield (f"{path}.{key}", committed.get(key, "<absent>"),
                       regenerated.get(key, "<absent>"), None)
            else:
                yield from differences(committed[key], regenerated[key], rules, f"{path}.{key}")
    elif isinstance(committed, list) and isinstance(regenerated, list):
        if len(committed) != len(regenerated):
            yield f"{path}.length", len(committed), len(regenerated), None
        for i, (c, r) in enumerate(zip(committed, regenerated)):
            yield from differences(c, r, rules, f"{path}[{i}]")
    elif committed != regenerated:
        yield path, committed, regenerated, None


def compare_dirs(committed_dir, regenerated_dir):
    """Returns the list of difference lines between two fixture directories."""
    lines = []
    root, default, specs = load_tolerances(committed_dir)
    prefix = os.path.relpath(os.path.abspath(committed_dir), root)
    prefix = "" if prefix == "." else prefix.replace(os.sep, "/") + "/"
    fixtures = lambda d: sorted(n for n in os.listdir(d) if n.endswith(".json") and n != TOLERANCES)
    committed = fixtures(committed_dir)
    regenerated = fixtures(regenerated_dir)
    for name in sorted(set(committed) ^ set(regenerated)):
        where = "committed only" if name in committed else "regenerated only"
        lines.append(f"{name}: {where}")
    for name in sorted(set(committed) & set(regenerated)):
        with open(os.path.join(committed_dir, name), encoding="utf-8") as fh:
            old = json.load(fh)
        with open(os.path.join(regenerated_dir, name), encoding="utf-8") as fh:
            new = json.load(fh)
        rules = FileRules(default, specs.get(prefix + name, {}))
        for path, a, b, rule in differences(old, new, rules):
            beyond = f" (beyond {rule})" if rule else ""
            lines.append(f"{name}: {path}: committed {a!r}, regenerated {b!r}{beyond}")
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
        print(f"compare_fixtures: {len(lines)} difference(s) beyond the tests' tolerances "
              f"({TOLERANCES})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
