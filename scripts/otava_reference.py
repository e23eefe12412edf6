#!/usr/bin/env python3
"""Reference change points for crates/analysis/src/change_points, computed with Apache Otava.

Writes crates/analysis/tests/fixtures/otava/change_points.json (or into the directory given
with --out); crates/analysis/tests/change_points_otava.rs asserts that loadlab finds the same
change points (indices exactly; p-values, means and deviations within tolerance).

Otava pins NumPy and SciPy versions other than those of scripts/requirements-stats.txt, so it
runs in a virtual environment of its own (scripts/setup-test-deps.sh makes it):

    python3 -m venv .venv-otava && .venv-otava/bin/pip install -r scripts/requirements-otava.txt
    .venv-otava/bin/python scripts/otava_reference.py [--out DIR]

The series are synthetic with known shifts (step, two steps, ramp, variance change, a spike,
noise only, the docs' 30-night example), drawn with fixed seeds and rounded to 4 decimals, so
the Rust side reads exactly the values Otava saw.
"""

import json
import math
import os
import sys
from importlib.metadata import version

import numpy as np
from otava.analysis import compute_change_points

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMITTED = os.path.join(ROOT, "crates", "analysis", "tests", "fixtures", "otava")

DEFAULT = {"max_p_value": 0.001, "window": 50, "min_magnitude": 0.0}


def series(seed, length, level, sd, shifts=(), sd_after=None, ramp=None):
    """Normal noise around `level`; each (index, factor) in `shifts` multiplies the level from
    `index` on; `sd_after` = (index, sd) changes the deviation; `ramp` = (start, end, factor)
    raises the level linearly by `factor` between two indices."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(length):
        mean = level
        for at, factor in shifts:
            if i >= at:
                mean *= factor
        if ramp is not None:
            start, end, factor = ramp
            frac = min(max((i - start) / (end - start), 0.0), 1.0)
            mean *= 1.0 + (factor - 1.0) * frac
        deviation = sd_after[1] if sd_after is not None and i >= sd_after[0] else sd
        out.append(round(float(rng.normal(mean, deviation)), 4))
    return out


def cases():
    yield "step_up_10pct_at_60", series(1, 100, 100.0, 3.0, shifts=[(60, 1.10)])
    yield "step_down_5pct_at_25_of_40", series(2, 40, 200.0, 4.0, shifts=[(25, 0.95)])
    yield "two_steps_at_50_and_110", series(3, 150, 50.0, 1.5, shifts=[(50, 1.15), (110, 0.90)])
    yield "ramp_20_to_60", series(4, 100, 100.0, 2.0, ramp=(20, 60, 1.3))
    yield "variance_change_at_50", series(5, 100, 100.0, 2.0, sd_after=(50, 10.0))
    yield "single_spike_at_40", [v if i != 40 else v * 3 for i, v in enumerate(series(6, 80, 10.0, 0.5))]
    yield "small_step_at_70_of_120", series(7, 120, 1000.0, 20.0, shifts=[(70, 1.03)])
    yield "nightly_30_regression_at_20", series(8, 30, 12.0, 0.4, shifts=[(20, 1.10)])
    for seed in (11, 12, 13, 14, 15):
        yield f"noise_only_seed_{seed}", series(seed, 100, 100.0, 5.0)


PARAMS = [
    DEFAULT,
    {"max_p_value": 0.001, "window": 20, "min_magnitude": 0.0},
    {"max_p_value": 0.01, "window": 50, "min_magnitude": 0.0},
    {"max_p_value": 0.001, "window": 50, "min_magnitude": 0.05},
]


def f(x):
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"non-finite value in fixture: {x}")
    return x


def point(cp):
    s = cp.stats
    return {
        "index": int(cp.index),
        "p_value": f(s.pvalue),
        "mean_before": f(s.mean_1),
        "mean_after": f(s.mean_2),
        "std_before": f(s.std_1),
        "std_after": f(s.std_2),
        "magnitude": f(s.change_magnitude()),
    }


def main():
    out = COMMITTED
    if "--out" in sys.argv:
        out = sys.argv[sys.argv.index("--out") + 1]
    os.makedirs(out, exist_ok=True)
    result = []
    for name, values in cases():
        for params in PARAMS:
            # The second value (weak points) is the same list object after Otava's merge, so
            # only the final change points are a reference.
            final, _ = compute_change_points(
                values,
                window_len=params["window"],
                max_pvalue=params["max_p_value"],
                min_magnitude=params["min_magnitude"],
            )
            result.append({
                "name": name,
                "params": params,
                "values": values,
                "change_points": [point(cp) for cp in final],
            })
    payload = {
        "generated_by": "scripts/otava_reference.py",
        "versions": {"apache-otava": version("apache-otava"), "numpy": np.__version__},
        "cases": result,
    }
    path = os.path.join(out, "change_points.json")
    text = json.dumps(payload, sort_keys=True, indent=1, allow_nan=False) + "\n"
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    print(f"wrote {path} ({len(text)} bytes)")


if __name__ == "__main__":
    main()
