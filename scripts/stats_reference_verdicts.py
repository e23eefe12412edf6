#!/usr/bin/env python3
"""Reference fixtures for the verdicts (crates/analysis/src/compare, study): exact Mann-Whitney
p-values with ties by enumerating every split, Kendall's tau against run order, Tukey's fences,
the one-run prediction test, and every case of the verdict taxonomy. Called by
scripts/stats_reference.py (whose helpers it uses); deterministic like it.
"""

import itertools
import math

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests

from stats_reference import SEED_BASELINE, SEED_STRESS, f, fl, moses_rank, rounded, write


# ---------------------------------------------------------------- exact Mann-Whitney with ties


def exact_conditional_p(a, b):
    """Two-sided p of the rank sum of `a` by enumerating every split of the pooled values
    (the exact conditional null distribution given the ties): min(1, 2 min(P(S<=s), P(S>=s)))."""
    pooled = np.concatenate([np.asarray(a, float), np.asarray(b, float)])
    doubled = np.rint(2 * stats.rankdata(pooled)).astype(np.int64)
    n1 = len(a)
    observed = int(doubled[:n1].sum())
    le = ge = total = 0
    for combo in itertools.combinations(range(len(pooled)), n1):
        s = int(doubled[list(combo)].sum())
        total += 1
        le += s <= observed
        ge += s >= observed
    return min(1.0, 2 * min(le, ge) / total)


def permutation_p(a, b):
    """The same p from SciPy's exact permutation test (all splits), as a cross-check."""
    def u_stat(x, y, axis):
        pooled = np.concatenate([x, y], axis=axis)
        ranks = stats.rankdata(pooled, axis=axis)
        return np.sum(np.take(ranks, range(x.shape[axis]), axis=axis), axis=axis)
    res = stats.permutation_test((np.asarray(a, float), np.asarray(b, float)), u_stat,
                                 permutation_type="independent", alternative="two-sided",
                                 n_resamples=np.inf, vectorized=True)
    return float(res.pvalue)


def mann_whitney_ties():
    """Exact p-values with ties (what `rank_sum_test` must give), next to what SciPy's
    `auto` gives (the normal approximation whenever there is a tie)."""
    rng = np.random.default_rng(23)
    pairs = [
        # 5 vs 5, complete separation, one tie inside the baseline.
        ("separated_5x5_one_tie", [4.10, 4.11, 4.11, 4.12, 4.13], [4.20, 4.21, 4.22, 4.23, 4.24]),
        # 6 vs 7, heavily tied per-run p95s (10 µs steps of the histogram).
        ("heavy_ties_6x7", [4.10, 4.10, 4.10, 4.10, 4.11, 4.11],
         [4.10, 4.11, 4.11, 4.11, 4.12, 4.12, 4.12]),
        ("heavy_ties_6x7_b", [4.10, 4.10, 4.10, 4.10, 4.11, 4.12],
         [4.10, 4.11, 4.12, 4.12, 4.12, 4.12, 4.13]),
        # Error rates: 0 in every baseline run, > 0 in some variant runs.
        ("errors_from_zero_10x10", [0.0] * 10, [0.0] * 6 + [0.01, 0.012, 0.009, 0.011]),
        ("errors_from_zero_all_10x10", [0.0] * 10,
         [0.01, 0.012, 0.009, 0.011, 0.02, 0.015, 0.01, 0.013, 0.008, 0.01]),
        ("all_tied_5x5", [2.0] * 5, [2.0] * 5),
        ("no_ties_5x5", [1.0, 2.0, 3.0, 4.5, 6.0], [2.5, 5.0, 7.0, 8.0, 9.0]),
        ("seed_p95_10x10", SEED_BASELINE, SEED_STRESS),
    ]
    for n1, n2, copies in [(5, 5, 3), (6, 7, 3), (10, 10, 3), (8, 12, 1), (4, 9, 1), (7, 3, 1)]:
        for c in range(copies):
            grid = 0.01 * (c + 1)
            a = rounded(np.round(rng.lognormal(np.log(4.1), 0.01, n1) / grid) * grid, 2)
            b = rounded(np.round(rng.lognormal(np.log(4.12), 0.01, n2) / grid) * grid, 2)
            pairs.append((f"quantized_{n1}x{n2}_{c}", a, b))
    cases = []
    for name, a, b in pairs:
        p = exact_conditional_p(a, b)
        if len(a) + len(b) <= 16:
            check = permutation_p(a, b)
            if abs(check - p) > 1e-12:
                raise AssertionError(f"{name}: enumeration {p} != permutation_test {check}")
        old = stats.mannwhitneyu(a, b, alternative="two-sided", method="auto")
        cases.append({"name": name, "a": fl(a), "b": fl(b), "p": f(p),
                      "p_scipy_auto": f(old.pvalue) if np.isfinite(old.pvalue) else None})
    # Beyond 25 per side with ties: the tie-corrected normal approximation (SciPy's).
    big_a = rounded(np.round(rng.lognormal(np.log(4.1), 0.01, 30) / 0.01) * 0.01, 2)
    big_b = rounded(np.round(rng.lognormal(np.log(4.12), 0.01, 30) / 0.01) * 0.01, 2)
    res = stats.mannwhitneyu(big_a, big_b, alternative="two-sided", method="asymptotic")
    large = [{"name": "quantized_30x30", "a": fl(big_a), "b": fl(big_b), "p": f(res.pvalue)}]
    write("mann_whitney_ties.json", {"cases": cases, "asymptotic": large})


# ---------------------------------------------------------------- drift, outliers, one run


def kendall_trend():
    """Kendall's tau of per-run values against run order, as `kendalltau(range(n), values)`."""
    rng = np.random.default_rng(29)
    inputs = [
        ("rising_5", [10.0, 11.0, 12.0, 13.0, 14.0]),
        ("falling_6", [30.0, 29.0, 27.5, 27.0, 26.0, 25.0]),
        ("flat_with_ties_8", [4.1, 4.1, 4.11, 4.1, 4.11, 4.1, 4.11, 4.1]),
        ("seed_baseline_p95", SEED_BASELINE),
        ("leak_10", [600.0, 612.0, 618.0, 640.0, 655.0, 661.0, 680.0, 702.0, 710.0, 731.0]),
    ]
    for n in (5, 7, 10, 15, 25, 40):
        inputs.append((f"noise_{n}", rounded(rng.lognormal(6, 0.1, n), 2)))
        trend = np.linspace(0, 0.15, n)
        inputs.append((f"trend_{n}", rounded(rng.lognormal(6, 0.05, n) * np.exp(trend), 2)))
        inputs.append((f"tied_trend_{n}", rounded(np.round(np.linspace(4.0, 4.06, n) +
                                                           rng.normal(0, 0.01, n), 2), 2)))
    cases = []
    for name, values in inputs:
        res = stats.kendalltau(np.arange(len(values)), values)
        cases.append({"name": name, "values": fl(values), "tau": f(res.statistic),
                      "p": f(res.pvalue)})
    write("kendall.json", {"cases": cases})


def tukey_fences():
    """Quartiles (numpy's default linear interpolation) and Tukey's fences."""
    rng = np.random.default_rng(31)
    inputs = [
        ("one_high", [100.0, 102.0, 101.0, 99.0, 180.0, 100.5, 101.5]),
        ("one_low_far", [50.0, 51.0, 52.0, 50.5, 51.5, 10.0]),
        ("none", [10.0, 11.0, 12.0, 13.0, 14.0]),
        ("seed_baseline_p95", SEED_BASELINE),
        ("tied_quartiles", [5.0, 5.0, 5.0, 5.0, 5.0, 6.0]),
    ]
    for n in (5, 8, 10, 20):
        v = rng.lognormal(6, 0.1, n)
        v[n // 2] *= 1.6
        inputs.append((f"lognormal_{n}", rounded(v, 2)))
    cases = []
    for name, values in inputs:
        q1, q3 = np.percentile(values, [25, 75])
        iqr = q3 - q1
        cases.append({"name": name, "values": fl(values), "q1": f(q1), "q3": f(q3),
                      "inner": [f(q1 - 1.5 * iqr), f(q3 + 1.5 * iqr)],
                      "outer": [f(q1 - 3 * iqr), f(q3 + 3 * iqr)]})
    write("tukey.json", {"cases": cases})


def prediction():
    """One new run against n baseline runs, on logs: t = (ln r - mean) / (s sqrt(1 + 1/n)),
    two-sided p from Student's t with n-1 df; the shift's 95% interval."""
    rng = np.random.default_rng(37)
    cases = []
    for n, cv, factor in [(5, 0.05, 1.0), (5, 0.05, 1.3), (10, 0.1, 1.0), (10, 0.1, 1.25),
                          (10, 0.1, 0.7), (20, 0.2, 1.5), (8, 0.02, 1.02), (30, 0.05, 1.1)]:
        sigma = math.sqrt(math.log(1 + cv * cv))
        base = rounded(rng.lognormal(6, sigma, n), 3)
        run = round(float(np.exp(6) * factor), 3)
        lb = np.log(base)
        m, s = np.mean(lb), np.std(lb, ddof=1)
        se = s * math.sqrt(1 + 1 / n)
        t = (math.log(run) - m) / se
        p = 2 * stats.t.sf(abs(t), n - 1)
        q = stats.t.ppf(0.975, n - 1)
        d = math.log(run) - m
        cases.append({"name": f"n{n}_cv{cv}_x{factor}", "baseline": fl(base), "run": run,
                      "p": f(p), "change": f(math.expm1(d)),
                      "ci": [f(math.expm1(d - q * se)), f(math.expm1(d + q * se))]})
    write("prediction.json", {"cases": cases})


# ---------------------------------------------------------------- verdicts


def holm_adjust(ps):
    return [f(x) for x in multipletests(ps, method="holm")[1]] if ps else []


def effect(b, v):
    """(relative change CI, shift CI): Hodges-Lehmann with Moses' interval."""
    m, n = len(b), len(v)
    k = moses_rank(m, n, "exact" if m * n <= 2500 else "asymptotic")
    if k is None:
        return None, None
    d = np.sort((np.asarray(v, float)[None, :] - np.asarray(b, float)[:, None]).ravel())
    shift = [f(d[k - 1]), f(d[m * n - k])]
    if min(b + v) <= 0:
        return None, shift
    ld = np.sort((np.log(v)[None, :] - np.log(b)[:, None]).ravel())
    return [f(np.expm1(ld[k - 1])), f(np.expm1(ld[m * n - k]))], shift


def one_run(b, r):
    """(p, relative CI) of one run against baseline runs (log-t prediction)."""
    lb = np.log(b)
    n, mu, sd = len(b), np.mean(lb), np.std(lb, ddof=1)
    se = sd * math.sqrt(1 + 1 / n)
    d = math.log(r) - mu
    q = stats.t.ppf(0.975, n - 1)
    return f(2 * stats.t.sf(abs(d / se), n - 1)), [f(math.expm1(d - q * se)),
                                                  f(math.expm1(d + q * se))]


def decide(higher_is_good, latency, sufficient, degenerate, p_adj, rel, shift, band):
    if not sufficient:
        return "insufficient"
    if degenerate:
        return "equivalent" if band > 0 else "~"
    if rel is not None and band > 0 and rel[0] >= -band and rel[1] <= band:
        return "equivalent"
    ci = rel if rel is not None else shift
    if p_adj is not None and p_adj < 0.05 and ci is not None and (ci[0] > 0 or ci[1] < 0):
        up = ci[0] > 0
        bad = up != higher_is_good
        if latency:
            return "slower" if bad else "faster"
        return "worse" if bad else "better"
    return "~"


def verdicts():
    """Each case of the verdict taxonomy: p (exact enumeration / SciPy t), Holm over the
    case's metrics, the 95% CI, and the verdict by the documented rule."""
    q = [4.10, 4.11, 4.12, 4.13, 4.14, 4.15, 4.16, 4.17, 4.18, 4.19]
    rng = np.random.default_rng(41)
    lat = "latency_ms.p95"
    base10 = rounded(rng.lognormal(np.log(100), 0.05, 10), 2)
    tight10 = rounded(rng.lognormal(np.log(100), 0.005, 10), 2)
    specs = [
        ("slower_5x5_tied", 0.0, [(lat, q[:5], [4.20, 4.21, 4.21, 4.22, 4.23])]),
        ("faster_5x5", 0.0, [(lat, [4.20, 4.21, 4.21, 4.22, 4.23], q[:5])]),
        ("worse_throughput_6x6", 0.0,
         [("requests.rate", [810.0, 812.5, 809.0, 811.0, 813.0, 810.5],
           [780.0, 779.5, 783.0, 781.0, 778.0, 782.5])]),
        ("better_throughput_6x6", 0.0,
         [("requests.rate", [780.0, 779.5, 783.0, 781.0, 778.0, 782.5],
           [810.0, 812.5, 809.0, 811.0, 813.0, 810.5])]),
        ("inconclusive_overlap_10x10", 0.0,
         [(lat, base10, rounded(np.asarray(base10) * rng.lognormal(0.01, 0.05, 10), 2))]),
        ("equivalent_tost_10x10", 0.02,
         [(lat, tight10, rounded(np.asarray(tight10)[::-1] * 1.002, 2))]),
        ("not_equivalent_band_too_narrow_10x10", 0.002,
         [(lat, tight10, rounded(np.asarray(tight10)[::-1] * 1.002, 2))]),
        ("slower_beyond_band_10x10", 0.02,
         [(lat, [100.0, 100.5, 101.0, 101.5, 102.0, 102.5, 103.0, 103.5, 104.0, 104.5],
           [102.0, 103.0, 103.5, 104.0, 104.5, 105.0, 105.5, 106.0, 106.5, 107.5])]),
        ("errors_from_zero_all_runs_10x10", 0.0,
         [("errors.rate", [0.0] * 10,
           [0.01, 0.012, 0.009, 0.011, 0.02, 0.015, 0.01, 0.013, 0.008, 0.01])]),
        ("errors_from_zero_some_runs_10x10", 0.0,
         [("errors.rate", [0.0] * 10, [0.0] * 6 + [0.01, 0.012, 0.009, 0.011])]),
        ("errors_zero_everywhere_10x10", 0.0, [("errors.rate", [0.0] * 10, [0.0] * 10)]),
        ("insufficient_4x4", 0.0, [(lat, q[:4], [4.30, 4.31, 4.32, 4.33])]),
        ("insufficient_1x1", 0.0, [(lat, [4.1], [4.5])]),
        # Holm: four degenerate metrics do not spend alpha; five separated ones do.
        ("holm_degenerate_do_not_count", 0.0,
         [(lat, q[:5], [4.30, 4.31, 4.32, 4.33, 4.34]),
          ("errors.rate", [0.0] * 5, [0.0] * 5),
          ("latency_ms.p50", [2.0] * 5, [2.0] * 5),
          ("latency_ms.p99", [9.0] * 5, [9.0] * 5),
          ("requests.rate", [40.0] * 5, [40.0] * 5)]),
        ("holm_five_separated", 0.0,
         [(m, q[:5], [4.30, 4.31, 4.32, 4.33, 4.34]) for m in
          ("latency_ms.p50", lat, "latency_ms.p99", "latency_ms.mean", "latency_ms.max")]),
        ("one_run_far_slower", 0.0, [(lat, base10, [160.0])]),
        ("one_run_inside", 0.0, [(lat, base10, [104.0])]),
        ("one_run_errors_from_zero", 0.0, [("errors.rate", [0.0] * 10, [0.02])]),
    ]
    cases = []
    for name, band, metrics in specs:
        rows = []
        for metric, b, v in metrics:
            b, v = [float(x) for x in b], [float(x) for x in v]
            higher = metric == "requests.rate"
            latency = metric.startswith("latency")
            one = len(v) == 1 and len(b) >= 5
            sufficient = (len(b) >= 5 and len(v) >= 5) or one
            degenerate = len(set(b + v)) == 1
            rel = shift = p = None
            if degenerate:
                pass
            elif one and min(b + v) > 0:
                p, rel = one_run(b, v[0])
            elif one:
                above = sum(x >= v[0] for x in b)
                below = sum(x <= v[0] for x in b)
                p = f(min(1.0, 2 * min(1 + above, 1 + below) / (len(b) + 1)))
            else:
                p = f(exact_conditional_p(b, v))
                rel, shift = effect(b, v)
            rows.append({"metric": metric, "baseline": b, "variant": v, "p": p, "change_ci": rel,
                         "difference_ci": shift, "sufficient": sufficient,
                         "degenerate": degenerate, "higher": higher, "latency": latency})
        family = [i for i, r in enumerate(rows)
                  if r["sufficient"] and not r["degenerate"] and r["p"] is not None]
        adjusted = holm_adjust([rows[i]["p"] for i in family])
        out = []
        for i, r in enumerate(rows):
            p_adj = adjusted[family.index(i)] if i in family else None
            verdict = decide(r["higher"], r["latency"], r["sufficient"], r["degenerate"], p_adj,
                             r["change_ci"], r["difference_ci"], band)
            out.append({"metric": r["metric"], "baseline": fl(r["baseline"]),
                        "variant": fl(r["variant"]), "p": r["p"], "p_adjusted": p_adj,
                        "change_ci": r["change_ci"], "difference_ci": r["difference_ci"],
                        "verdict": verdict})
        cases.append({"name": name, "equivalence": band, "metrics": out})
    write("verdicts.json", {"cases": cases})



# ---------------------------------------------------------------- runs test on residual signs


def sign_runs_reference():
    """The Wald-Wolfowitz runs test on signs, by brute force: every arrangement of the same
    counts of + and - is enumerated, and p is the share with as few runs or fewer (the USL
    fit's check for systematic residuals)."""
    def runs_of(signs):
        return 1 + sum(1 for a, b in zip(signs, signs[1:]) if a != b)

    rng = np.random.default_rng(20261126)
    sequences = [
        [1, 1, 1, 1, -1, -1, -1, -1],
        [1, -1, 1, -1, 1, -1, 1, -1],
        [-3, -2, 4, 5, 6, -1, -2, 3, 3, 1, -4, -5],
        [2, 2, -1, 1, 1, -1, -1, 3, -3, 4, 4, 4, -2, -2],
    ] + [list(rng.normal(size=12)) for _ in range(3)] \
      + [list(np.where(rng.random(16) < 0.5, -1.0, 1.0) * (1 + rng.random(16))) for _ in range(2)]
    cases = []
    for values in sequences:
        signs = [v > 0 for v in values if v != 0]
        n, plus = len(signs), sum(signs)
        observed = runs_of(signs)
        fewer = total = 0
        for chosen in itertools.combinations(range(n), plus):
            arrangement = [False] * n
            for i in chosen:
                arrangement[i] = True
            total += 1
            fewer += runs_of(arrangement) <= observed
        cases.append({"values": fl(values), "runs": observed, "p_fewer": f(fewer / total)})
    write("sign_runs.json", {"cases": cases})


def main():
    sign_runs_reference()
    mann_whitney_ties()
    kendall_trend()
    tukey_fences()
    prediction()
    verdicts()
