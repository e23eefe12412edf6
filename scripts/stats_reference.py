#!/usr/bin/env python3
"""Reference fixtures for crates/analysis/src/stats (loadlab-analysis), computed with SciPy.

Writes JSON files into crates/analysis/tests/fixtures/ (or the directory given with --out);
the Rust integration tests in crates/analysis/tests/ assert agreement with them.
Deterministic on one machine: fixed seeds, sorted keys, Python's shortest round-trip float
repr. Across machines the last bits of a float may differ (vector unit, BLAS kernel), so
scripts/setup-test-deps.sh regenerates into a scratch directory and compares numerically
(scripts/compare_fixtures.py), never byte for byte.

    pip install -r scripts/requirements-stats.txt
    python3 scripts/stats_reference.py [--out DIR]
"""

import json
import math
import os
import sys

import numpy as np
import scipy
from scipy import optimize, stats
from scipy.stats._mannwhitneyu import _MWU, _mwu_choose_method

import kneed
import statsmodels
from kneed import KneeLocator
from statsmodels.stats.multitest import multipletests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMITTED = os.path.join(ROOT, "crates", "analysis", "tests", "fixtures")


def out_dir():
    """Where fixtures are written: --out (passed on through the environment, so that
    stats_reference_verdicts, which imports this module afresh, writes there too)."""
    return os.environ.get("LOADLAB_FIXTURES_OUT") or COMMITTED

# The seed study's per-run p95 latencies (ms): 10 baseline runs, 10 stress runs.
SEED_BASELINE = [600.51, 717.70, 727.38, 706.32, 506.16, 620.98, 489.08, 624.38, 491.25, 625.18]
SEED_STRESS = [2350.00, 2240.00, 2600.00, 2569.74, 2623.31, 2189.81, 2281.56, 2542.17, 2398.52,
               2577.86]


def f(x):
    """Plain Python float (numpy scalars are not JSON-serializable)."""
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"non-finite value in fixture: {x}")
    return x


def fl(xs):
    return [f(x) for x in xs]


def rounded(xs, digits=4):
    return [round(float(x), digits) for x in xs]


def write(name, payload):
    payload = {
        "generated_by": "scripts/stats_reference.py",
        "versions": {
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "statsmodels": statsmodels.__version__,
            "kneed": kneed.__version__,
        },
        **payload,
    }
    path = os.path.join(out_dir(), name)
    text = json.dumps(payload, sort_keys=True, indent=1, allow_nan=False) + "\n"
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    print(f"wrote {path} ({len(text)} bytes)")


# ---------------------------------------------------------------- median CI (binomial)


def median_ci_rank(n):
    """Largest k with 2*binom.cdf(k-1, n, .5) <= 0.05, or None."""
    best = None
    for k in range(1, (n + 1) // 2 + 1):
        if 2 * stats.binom.cdf(k - 1, n, 0.5) <= 0.05:
            best = k
        else:
            break
    return best


def median_ci():
    cases = []
    for n in range(1, 201):
        k = median_ci_rank(n)
        cases.append({
            "n": n,
            "k": k,
            "coverage": None if k is None else f(1 - 2 * stats.binom.cdf(k - 1, n, 0.5)),
        })
    write("median_ci.json", {"cases": cases})


# ---------------------------------------------------------------- describe


def describe_one(values):
    a = np.asarray(values, dtype=float)
    n = len(a)
    mean = np.mean(a)
    sd = np.std(a, ddof=1) if n > 1 else 0.0
    if n > 1:
        half = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
        mean_ci = [f(mean - half), f(mean + half)]
    else:
        mean_ci = [f(mean), f(mean)]
    k = median_ci_rank(n)
    s = np.sort(a)
    return {
        "n": n,
        "mean": f(mean),
        "sd": f(sd),
        "cv": f(sd / abs(mean)) if sd > 0 else 0.0,
        "median": f(np.median(a)),
        "median_ci": None if k is None else [f(s[k - 1]), f(s[n - k])],
        "mean_ci": mean_ci,
        "min": f(s[0]),
        "max": f(s[-1]),
    }


def describe():
    rng = np.random.default_rng(20240601)
    inputs = {
        "seed_baseline_p95": SEED_BASELINE,
        "seed_stress_p95": SEED_STRESS,
        "single": [412.5],
        "two": [100.0, 110.0],
        "five": [5.0, 1.0, 4.0, 2.0, 3.0],
        "six": [12.0, 15.5, 11.25, 14.0, 13.0, 12.5],
        "seven_with_ties": [3.0, 3.0, 1.0, 2.0, 3.0, 9.0, 2.0],
        "constant": [250.0, 250.0, 250.0, 250.0, 250.0, 250.0],
    }
    for n in (8, 12, 15, 20, 30, 50, 101):
        inputs[f"lognormal_{n}"] = rounded(rng.lognormal(mean=6.0, sigma=0.2, size=n), 3)
    cases = [{"name": k, "values": fl(v), "expected": describe_one(v)} for k, v in inputs.items()]
    write("describe.json", {"cases": cases})


# ---------------------------------------------------------------- t quantiles


def t_ppf():
    ps = [1e-10, 1e-6, 0.001, 0.01, 0.025, 0.05, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 0.95, 0.975,
          0.99, 0.995, 0.999]
    dfs = [1, 1.5, 2, 2.5, 3, 4, 4.7, 5, 7, 9, 10, 12.34, 19, 29, 30, 50, 100, 1000, 1e5]
    cases = [{"p": p, "df": f(df), "q": f(stats.t.ppf(p, df))} for df in dfs for p in ps]
    normal = [{"p": p, "q": f(stats.norm.ppf(p))} for p in ps]
    write("t_ppf.json", {"cases": cases, "normal": normal})


# ---------------------------------------------------------------- Mann-Whitney U


def mann_whitney():
    rng = np.random.default_rng(7)
    pairs = [("seed_p95", SEED_BASELINE, SEED_STRESS),
             ("seed_p95_reversed", SEED_STRESS, SEED_BASELINE),
             ("seed_baseline_vs_shifted", SEED_BASELINE, [v * 1.05 + 3.0 for v in SEED_BASELINE])]
    for n1 in range(5, 13):
        for n2 in (5, 8, 9, 12):
            a = rounded(rng.lognormal(6.0, 0.15, size=n1), 2)
            b = rounded(rng.lognormal(6.08, 0.15, size=n2), 2)
            pairs.append((f"continuous_{n1}x{n2}", a, b))
            # ties: values on a coarse grid
            at = [float(v) for v in rng.integers(0, 6, size=n1)]
            bt = [float(v) for v in rng.integers(1, 7, size=n2)]
            pairs.append((f"ties_{n1}x{n2}", at, bt))
    pairs += [
        ("separated_3x4", [1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]),
        ("one_vs_many", [5.5], [1.0, 2.0, 3.0, 4.0, 6.0, 7.0]),
        ("interleaved_4x4", [1.0, 3.0, 5.0, 7.0], [2.0, 4.0, 6.0, 8.0]),
        ("all_tied", [2.0, 2.0, 2.0], [2.0, 2.0, 2.0, 2.0]),
        ("half_integer_u_exact", [1.0, 2.0, 2.0, 4.0, 5.0], [2.0, 3.0, 6.0, 7.0, 8.0]),
        ("large_20x25", rounded(rng.normal(100, 10, 20), 3), rounded(rng.normal(104, 10, 25), 3)),
    ]
    cases = []
    for name, a, b in pairs:
        for method in ("auto", "exact", "asymptotic"):
            res = stats.mannwhitneyu(a, b, alternative="two-sided", use_continuity=True,
                                     method=method)
            if method == "auto":
                ties = len(np.unique(np.concatenate([a, b]))) < len(a) + len(b)
                used = _mwu_choose_method(len(a), len(b), ties)
            else:
                used = method
            cases.append({"name": name, "a": fl(a), "b": fl(b), "method": method,
                          "used": used, "u": f(res.statistic), "p": f(res.pvalue)})
    write("mann_whitney.json", {"cases": cases})


# ---------------------------------------------------------------- Hodges-Lehmann / Welch


def moses_rank(m, n, method):
    if method == "exact":
        dist = _MWU(m, n)
        best = None
        for u in range(0, m * n // 2 + 1):
            if dist.cdf(np.asarray([u]))[0] <= 0.025:
                best = u + 1
            else:
                break
        return best
    k = math.floor(m * n / 2 - stats.norm.ppf(0.975) * math.sqrt(m * n * (m + n + 1) / 12))
    return k if k >= 1 else None


def hodges_lehmann_one(baseline, variant, method):
    m, n = len(baseline), len(variant)
    if method == "auto":
        method = "exact" if m * n <= 2500 else "asymptotic"
    k = moses_rank(m, n, method)
    d = np.sort((np.log(np.asarray(variant))[None, :] - np.log(np.asarray(baseline))[:, None])
                .ravel())
    if k is None:
        return {"k": None, "change": f(np.expm1(np.median(d))), "ci": None}
    return {"k": k, "change": f(np.expm1(np.median(d))),
            "ci": [f(np.expm1(d[k - 1])), f(np.expm1(d[m * n - k]))]}


def welch_one(baseline, variant):
    lb, lv = np.log(baseline), np.log(variant)
    res = stats.ttest_ind(lv, lb, equal_var=False)
    ci = res.confidence_interval(0.95)
    delta = np.mean(lv) - np.mean(lb)
    return {"change": f(np.expm1(delta)), "ci": [f(np.expm1(ci.low)), f(np.expm1(ci.high))],
            "df": f(res.df)}


def hodges_lehmann():
    rng = np.random.default_rng(11)
    pairs = [("seed_p95", SEED_BASELINE, SEED_STRESS),
             ("seed_p95_self", SEED_BASELINE, SEED_BASELINE),
             ("tiny_3x3", [10.0, 11.0, 12.0], [12.0, 13.0, 15.0]),
             ("min_4x4", [10.0, 11.0, 12.0, 13.0], [12.0, 13.0, 15.0, 16.0]),
             ("ties", [100.0, 100.0, 110.0, 120.0, 120.0, 130.0],
              [110.0, 120.0, 120.0, 140.0, 150.0, 150.0])]
    for m, n in [(5, 5), (5, 8), (6, 10), (8, 8), (10, 10), (10, 12), (12, 7), (20, 20), (30, 40),
                 (60, 50)]:
        b = rounded(rng.lognormal(6.0, 0.2, size=m), 3)
        v = rounded(rng.lognormal(6.2, 0.25, size=n), 3)
        pairs.append((f"lognormal_{m}x{n}", b, v))
    cases = []
    for name, b, v in pairs:
        for method in ("auto", "exact", "asymptotic"):
            if method == "exact" and len(b) * len(v) > 2500:
                continue
            cases.append({"name": name, "baseline": fl(b), "variant": fl(v), "method": method,
                          "expected": hodges_lehmann_one(b, v, method)})
    welch = [{"name": name, "baseline": fl(b), "variant": fl(v), "expected": welch_one(b, v)}
             for name, b, v in pairs]
    # Moses' interval on raw differences, with ties (quantized percentiles, error rates of 0).
    shift_pairs = [
        ("quantized_5x5", [4.10, 4.11, 4.11, 4.12, 4.13], [4.12, 4.13, 4.13, 4.14, 4.15]),
        ("quantized_6x7", [4.10, 4.10, 4.10, 4.10, 4.11, 4.11],
         [4.10, 4.11, 4.11, 4.11, 4.12, 4.12, 4.12]),
        ("errors_from_zero_10x10", [0.0] * 10,
         [0.0, 0.0, 0.01, 0.012, 0.009, 0.011, 0.02, 0.015, 0.01, 0.013]),
        ("errors_both_zero_5x5", [0.0] * 5, [0.0] * 5),
    ]
    shift = []
    for name, b, v in shift_pairs:
        m, n = len(b), len(v)
        k = moses_rank(m, n, "exact")
        d = np.sort((np.asarray(v, float)[None, :] - np.asarray(b, float)[:, None]).ravel())
        shift.append({"name": name, "baseline": fl(b), "variant": fl(v),
                      "expected": {"k": k, "shift": f(np.median(d)),
                                   "ci": [f(d[k - 1]), f(d[m * n - k])]}})
        if all(x > 0 for x in b + v):
            cases.append({"name": name, "baseline": fl(b), "variant": fl(v), "method": "auto",
                          "expected": hodges_lehmann_one(b, v, "auto")})
    write("hodges_lehmann.json", {"cases": cases, "welch": welch, "shift": shift})


# ---------------------------------------------------------------- Holm


def holm():
    rng = np.random.default_rng(3)
    inputs = [
        [0.01, 0.04, 0.03, 0.005],
        [0.5],
        [0.01, 0.01, 0.02],
        [0.3, 0.2, 0.9, 0.6, 0.04],
        [0.0, 1.0, 0.5],
        [0.02, 0.02, 0.02, 0.02],
    ]
    for n in (5, 10, 25):
        inputs.append([f(p) for p in rng.uniform(0, 0.2, size=n)])
        inputs.append([f(p) for p in rng.beta(0.5, 3.0, size=n)])
    cases = [{"p": fl(p), "adjusted": fl(multipletests(p, method="holm")[1])} for p in inputs]
    write("holm.json", {"cases": cases})


# ---------------------------------------------------------------- Kneedle


def kneedle():
    rng = np.random.default_rng(5)
    curves = []
    x = np.arange(1, 41, dtype=float)
    # throughput that saturates (concave increasing)
    thr = 1000 * x / (1 + 0.05 * (x - 1) + 0.001 * x * (x - 1))
    curves.append(("usl_throughput", x, np.round(thr, 3), "concave", "increasing"))
    # latency hockey stick (convex increasing)
    lat = 20 + 0.5 * x + np.where(x > 25, (x - 25) ** 2 * 4.0, 0.0)
    curves.append(("latency_hockey_stick", x, np.round(lat, 3), "convex", "increasing"))
    # decreasing convex (elbow of an error curve)
    dec = 100 / x + 1
    curves.append(("inverse_decreasing", x, np.round(dec, 6), "convex", "decreasing"))
    # decreasing concave
    dc = 100 - (x / 8) ** 3
    curves.append(("cubic_decreasing", x, np.round(dc, 6), "concave", "decreasing"))
    # uneven x spacing (concurrency ladder)
    xl = np.array([1, 2, 4, 8, 16, 32, 48, 64, 96, 128], dtype=float)
    curves.append(("ladder_throughput", xl,
                   np.round(900 * xl / (1 + 0.08 * (xl - 1) + 0.0002 * xl * (xl - 1)), 3),
                   "concave", "increasing"))
    curves.append(("ladder_latency", xl, np.round(10 + 0.02 * xl ** 2, 3), "convex",
                   "increasing"))
    # seed study's load/latency: noisy
    xn = np.arange(1, 31, dtype=float)
    noisy = 50 + np.exp(xn / 5) + rng.normal(0, 3, size=xn.size)
    curves.append(("noisy_exponential", xn, np.round(noisy, 3), "convex", "increasing"))
    noisy_thr = 1000 * (1 - np.exp(-xn / 6)) + rng.normal(0, 10, size=xn.size)
    curves.append(("noisy_saturation", xn, np.round(noisy_thr, 3), "concave", "increasing"))
    # straight line: no knee
    curves.append(("straight_line", x, 3 * x + 2, "concave", "increasing"))
    # wrong shape given on purpose
    curves.append(("wrong_shape", x, np.round(lat, 3), "concave", "decreasing"))
    cases = []
    for name, xs, ys, curve, direction in curves:
        for s in (0.5, 1.0, 3.0):
            kl = KneeLocator(xs, ys, S=s, curve=curve, direction=direction,
                             interp_method="interp1d", online=False)
            if kl.knee is None:
                expected = None
            else:
                idx = int(np.where(xs == kl.knee)[0][0])
                expected = {"x": f(kl.knee), "y": f(kl.knee_y), "index": idx}
            cases.append({"name": name, "x": fl(xs), "y": fl(ys), "curve": curve,
                          "direction": direction, "sensitivity": s, "knee": expected})
    write("kneedle.json", {"cases": cases})


# ---------------------------------------------------------------- USL


def usl_model(n, sigma, kappa, lam):
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def usl_jac(n, sigma, kappa, lam):
    """Analytic Jacobian: curve_fit's default finite differences limit the parameters to
    ~1e-6 relative on ill-conditioned fits, which is the tolerance being tested."""
    d = 1 + sigma * (n - 1) + kappa * n * (n - 1)
    return np.stack([-lam * n * (n - 1) / d ** 2, -lam * n * n * (n - 1) / d ** 2, n / d],
                    axis=1)


def usl():
    rng = np.random.default_rng(42)
    specs = [
        ("retrograde", [1, 2, 4, 8, 16, 24, 32, 48, 64], (0.05, 0.0008, 1000.0), 0.02),
        ("contention_only", [1, 2, 4, 8, 16, 32, 64], (0.12, 0.0, 500.0), 0.01),
        ("near_linear", [1, 2, 3, 4, 5, 6, 7, 8], (0.001, 0.00001, 250.0), 0.005),
        ("coherency_only", [1, 2, 4, 6, 8, 12, 16, 20], (0.0, 0.004, 800.0), 0.01),
        ("exact_model", [1, 2, 4, 8, 16, 32], (0.03, 0.0005, 120.0), 0.0),
        ("repeated_levels", [1, 1, 4, 4, 16, 16, 32, 32], (0.08, 0.0003, 2000.0), 0.03),
        ("noisy_poor", [1, 2, 3, 4, 5, 6, 7, 8], (0.2, 0.01, 100.0), 0.3),
    ]
    cases = []
    for name, ns, (sigma, kappa, lam), noise in specs:
        n = np.asarray(ns, dtype=float)
        x = usl_model(n, sigma, kappa, lam) * (1 + noise * rng.standard_normal(n.size))
        x = np.round(x, 4)
        p0 = [0.01, 0.0001, float(np.max(x / n))]
        popt, _ = optimize.curve_fit(usl_model, n, x, p0=p0, jac=usl_jac,
                                     bounds=([0, 0, 0], [np.inf, np.inf, np.inf]),
                                     ftol=1e-15, xtol=1e-15, gtol=1e-15, max_nfev=100000)
        s, k, lam_hat = (float(v) for v in popt)
        resid = x - usl_model(n, s, k, lam_hat)
        sse = float(np.sum(resid ** 2))
        sst = float(np.sum((x - np.mean(x)) ** 2))
        n_star = math.sqrt((1 - s) / k) if k > 0 and s < 1 else None
        cases.append({
            "name": name, "n": fl(n), "x": fl(x), "p0": p0,
            "expected": {"sigma": f(s), "kappa": f(k), "lambda": f(lam_hat), "sse": f(sse),
                         "r2": f(1 - sse / sst), "n_star": n_star,
                         "peak": None if n_star is None else f(usl_model(n_star, s, k, lam_hat))},
        })
    write("usl.json", {"cases": cases})


# ---------------------------------------------------------------- rounds of segments

def hdr_quantile(sorted_samples, q):
    """HdrHistogram's value at quantile q for integer samples it holds exactly (below 2048 µs,
    one bucket per µs): the first value whose cumulative count reaches ceil(q * N)."""
    n = len(sorted_samples)
    wanted = max(1, math.ceil(q * n))
    return int(sorted_samples[wanted - 1])


def rounds_bootstrap():
    """loadlab study --segments: each variant's rounds of segments (integer latencies in µs),
    the ratio of medians over rounds of each round's merged percentile, its two-level
    bootstrap (rounds, then segments within each drawn round, samples merged and the
    percentile computed again) with NumPy's own generator, and Kalibera & Jones's variance
    components of the segments' percentile. An independent computation of what
    crates/analysis/src/study/rounds.rs does."""
    rng = np.random.default_rng(20261128)
    rounds, segments, per_segment = 5, 3, 300
    stats_q = {"p50": 0.5, "p95": 0.95, "p99": 0.99}

    def variant(scale, round_spread, segment_spread):
        out = []
        for _ in range(rounds):
            r_shift = rng.normal(0.0, round_spread)
            segs = []
            for _ in range(segments):
                s_shift = rng.normal(0.0, segment_spread)
                x = rng.lognormal(math.log(400.0 * scale) + r_shift + s_shift, 0.35, per_segment)
                segs.append(sorted(int(v) for v in np.clip(np.round(x), 100, 2000)))
            out.append(segs)
        return out

    a = variant(1.0, 0.05, 0.02)
    b = variant(1.3, 0.05, 0.02)

    def round_quantile(segs, q):
        return hdr_quantile(sorted(v for s in segs for v in s), q) / 1000.0

    def median_over_rounds(var, q):
        return float(np.median([round_quantile(r, q) for r in var]))

    ratios = {k: median_over_rounds(b, q) / median_over_rounds(a, q) for k, q in stats_q.items()}

    resamples = 10000
    boot = {k: [] for k in stats_q}
    own = [{k: [] for k in stats_q}, {k: [] for k in stats_q}]
    arrays = [[[np.array(s) for s in r] for r in var] for var in (a, b)]
    for _ in range(resamples):
        medians = []
        for var in arrays:
            per_stat = {k: [] for k in stats_q}
            for ri in rng.integers(0, rounds, rounds):
                picks = rng.integers(0, segments, segments)
                merged = np.sort(np.concatenate([var[ri][si] for si in picks]))
                for k, q in stats_q.items():
                    per_stat[k].append(hdr_quantile(merged, q) / 1000.0)
            medians.append({k: float(np.median(v)) for k, v in per_stat.items()})
        for k in stats_q:
            boot[k].append(medians[1][k] / medians[0][k])
            own[0][k].append(medians[0][k])
            own[1][k].append(medians[1][k])
    bootstrap = {}
    for k in stats_q:
        d = np.array(boot[k])
        bootstrap[k] = {"ci": [f(np.percentile(d, 2.5)), f(np.percentile(d, 97.5))],
                        "sd": f(d.std(ddof=1))}

    percentiles = {}
    for name, var, dist in (("a", a, own[0]), ("b", b, own[1])):
        percentiles[name] = {}
        for k, q in stats_q.items():
            d = np.array(dist[k])
            percentiles[name][k] = {"median_ms": f(median_over_rounds(var, q)),
                                    "ci_ms": [f(np.percentile(d, 2.5)), f(np.percentile(d, 97.5))],
                                    "sd": f(d.std(ddof=1))}

    def levels(var):
        # The percentile looked at: p99 when every segment has 10 requests beyond it, else
        # p95, else p50 (300 a segment: p95).
        n = min(len(s) for r in var for s in r)
        name, q = next(((k, q) for k, q in (("p99", 0.99), ("p95", 0.95)) if n * (1 - q) >= 10),
                       ("p50", 0.5))
        y = np.array([[hdr_quantile(s, q) / 1000.0 for s in r] for r in var])
        n1, n2 = y.shape
        means = y.mean(axis=1)
        within = float(((y - means[:, None]) ** 2).sum() / (n1 * (n2 - 1)))
        s1 = float(means.var(ddof=1))
        between = max(s1 - within / n2, 0.0)
        var_now = between / n1 + within / (n1 * n2)
        more_rounds = math.sqrt((between / (n1 + 1) + within / ((n1 + 1) * n2)) / var_now)
        more_segments = math.sqrt((between / n1 + within / (n1 * (n2 + 1))) / var_now)
        return {"metric": f"latency_ms.{name}", "within_rounds": f(within),
                "between_rounds": f(between), "rounds_share": f(between / (between + within)),
                "ci_factor_more_rounds": f(more_rounds),
                "ci_factor_more_segments": f(more_segments)}

    write("rounds_bootstrap.json", {
        "about": "Two variants of 5 rounds x 3 segments x 300 integer latencies (µs); b/a ratio of "
                 "the medians over rounds of each round's merged percentile (HdrHistogram's rule), "
                 "a two-level bootstrap of it (10,000 resamples, NumPy PCG64) and K&J variance "
                 "components of the segments' percentile.",
        "a": a, "b": b, "ratios": {k: f(v) for k, v in ratios.items()},
        "bootstrap": bootstrap, "resamples": resamples, "percentiles": percentiles,
        "levels": {"a": levels(a), "b": levels(b)},
    })


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--out":
        os.environ["LOADLAB_FIXTURES_OUT"] = os.path.abspath(sys.argv[2])
    elif len(sys.argv) != 1:
        sys.exit("usage: stats_reference.py [--out DIR]")
    os.makedirs(out_dir(), exist_ok=True)
    print(f"numpy {np.__version__}, scipy {scipy.__version__}, statsmodels "
          f"{statsmodels.__version__}, kneed {kneed.__version__}", file=sys.stderr)
    median_ci()
    describe()
    t_ppf()
    mann_whitney()
    hodges_lehmann()
    holm()
    kneedle()
    usl()
    rounds_bootstrap()
    import stats_reference_verdicts as verdict_fixtures  # noqa: E402 (needs this module)
    verdict_fixtures.main()


if __name__ == "__main__":
    main()
