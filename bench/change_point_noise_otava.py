#!/usr/bin/env python3
"""Apache Otava's false change-point rate on noise-only series, measured as
bench/change_point_noise.rs measures loadlab's (same settings, same noise models, NumPy's
generator instead of SplitMix64, so the figures agree within sampling error, not exactly).

    .venv-otava/bin/python bench/change_point_noise_otava.py [SERIES]
"""

import sys

import numpy as np
from otava.analysis import compute_change_points

POINTS = 100
SETTINGS = [
    ("p 0.001, window 50 (default)", 0.001, 50, 0.0),
    ("p 0.001, window 20", 0.001, 20, 0.0),
    ("p 0.01, window 50", 0.01, 50, 0.0),
    ("p 0.001, window 50, min magnitude 5%", 0.001, 50, 0.05),
]


def gaussian(rng):
    return list(100.0 * (1.0 + 0.05 * rng.standard_normal(POINTS)))


def log_normal(rng):
    sigma = np.sqrt(np.log(1.0 + 0.10 ** 2))
    return list(100.0 * np.exp(sigma * rng.standard_normal(POINTS)))


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    print(f"{count} noise-only series of {POINTS} points per row (Otava)\n")
    print("| settings | noise | series with a false change point | false change points per series |")
    print("|---|---|---:|---:|")
    for label, p, window, magnitude in SETTINGS:
        for noise, draw in (("Gaussian, CV 5%", gaussian), ("log-normal, CV 10%", log_normal)):
            rng = np.random.default_rng(0x10AD1AB0)
            with_any = total = 0
            for _ in range(count):
                found, _ = compute_change_points(draw(rng), window_len=window, max_pvalue=p,
                                                 min_magnitude=magnitude)
                with_any += bool(found)
                total += len(found)
            print(f"| {label} | {noise} | {100 * with_any / count:.1f}% | {total / count:.3f} |")


if __name__ == "__main__":
    main()
