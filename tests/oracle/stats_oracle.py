#!/usr/bin/env python3
"""Reference figures for crates/sparring-stats, computed with SciPy, NumPy,
scikit-learn and statsmodels.

Usage: stats_oracle.py INPUT.json  (prints the figures as JSON on stdout)

The Rust test crates/sparring-stats/tests/oracle.rs writes INPUT.json from
deterministic generated cases, runs this script and compares. Exit status 3
means a module is missing; the message on stderr says which and how to
install it.

Input keys and what is computed for each case:
  pass_k        [{n, c, k}]         pass@k = 1 - C(n-c,k)/C(n,k), pass^k = C(c,k)/C(n,k)
                                    with exact integers (scipy.special.comb(exact=True))
  mean_pass_k   [{tasks:[[n,c]], k}] means over tasks with n >= k
  quantile      [{values, q}]       numpy.quantile (linear)
  bootstrap     [{values, seed}]    scipy.stats.bootstrap, percentile, 95 %, 10,000 resamples
  paired        [{before, after, seed, exact}]
                                    paired bootstrap of mean(after - before), and
                                    scipy.stats.permutation_test (permutation_type="samples")
                                    of |mean(after - before)|, exact or 100,000 resamples
  wilson        [{x, n}]            statsmodels proportion_confint(method="wilson")
  kappa         [{a, b}]            sklearn cohen_kappa_score (NaN becomes null)
  judge         [{judge, gold}]     agreement, its Wilson interval, kappa, pass_when_gold_fail
  variance      [{groups}]          row-weighted E[Var(r|task)], Var(E[r|task]), population
  corr          [{feature, reward}] Pearson of per-task-demeaned values (numpy.corrcoef)
  eval_variance [{values}]          mean, numpy.std(ddof=1)
"""

import json
import math
import sys
from fractions import Fraction

PIP_HINT = "python3 -m pip install -r tests/oracle/requirements.txt"

try:
    import numpy as np
    from scipy import special, stats
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.proportion import proportion_confint
except ImportError as err:  # pragma: no cover - environment problem
    print(f"error: {err}\nhint: {PIP_HINT}", file=sys.stderr)
    sys.exit(3)


def fnum(x):
    """A JSON-safe float: NaN becomes None."""
    x = float(x)
    return None if math.isnan(x) else x


def pass_k(n, c, k):
    total = special.comb(n, k, exact=True)
    at = 1 - Fraction(special.comb(n - c, k, exact=True), total)
    hat = Fraction(special.comb(c, k, exact=True), total)
    return float(at), float(hat)


def mean_pass_k(tasks, k):
    used = [(n, c) for n, c in tasks if n >= k]
    if not used:
        return {"n_tasks": 0, "pass_at_k": None, "pass_hat_k": None}
    at = sum(Fraction(1) - Fraction(special.comb(n - c, k, exact=True), special.comb(n, k, exact=True)) for n, c in used)
    hat = sum(Fraction(special.comb(c, k, exact=True), special.comb(n, k, exact=True)) for n, c in used)
    return {"n_tasks": len(used), "pass_at_k": float(at / len(used)), "pass_hat_k": float(hat / len(used))}


def bootstrap(values, seed):
    x = np.asarray(values, dtype=float)
    res = stats.bootstrap(
        (x,),
        np.mean,
        n_resamples=10_000,
        method="percentile",
        confidence_level=0.95,
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    ci = res.confidence_interval
    return {"estimate": float(np.mean(x)), "lo": float(ci.low), "hi": float(ci.high)}


def paired(before, after, seed, exact):
    b = np.asarray(before, dtype=float)
    a = np.asarray(after, dtype=float)

    def mean_diff(x, y, axis=-1):
        return np.mean(y - x, axis=axis)

    boot = stats.bootstrap(
        (b, a),
        mean_diff,
        paired=True,
        n_resamples=10_000,
        method="percentile",
        confidence_level=0.95,
        vectorized=True,
        rng=np.random.default_rng(seed),
    )

    # Swapping before/after within a pair flips the sign of its difference,
    # so permutation_type="samples" is the sign-flip test. The statistic is
    # |mean difference| with alternative="greater": the share of assignments
    # at least as extreme, the observed one included (equal to the
    # two-sided p of the symmetric sign-flip null).
    def abs_mean_diff(x, y, axis=-1):
        return np.abs(np.mean(y - x, axis=axis))

    perm = stats.permutation_test(
        (b, a),
        abs_mean_diff,
        permutation_type="samples",
        alternative="greater",
        n_resamples=np.inf if exact else 100_000,
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    ci = boot.confidence_interval
    return {
        "delta": float(np.mean(a - b)),
        "lo": float(ci.low),
        "hi": float(ci.high),
        "p_value": float(perm.pvalue),
    }


def wilson(x, n):
    lo, hi = proportion_confint(x, n, alpha=0.05, method="wilson")
    return {"lo": float(lo), "hi": float(hi)}


def kappa(a, b):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fnum(cohen_kappa_score(np.asarray(a, dtype=int), np.asarray(b, dtype=int)))


def judge(judge_labels, gold):
    j = np.asarray(judge_labels, dtype=bool)
    g = np.asarray(gold, dtype=bool)
    agree = int(np.sum(j == g))
    n = len(j)
    gold_fail = ~g
    return {
        "n": n,
        "agreement": agree / n,
        "ci": wilson(agree, n),
        "kappa": kappa(j, g),
        "pass_when_gold_fail": float(np.mean(j[gold_fail])) if gold_fail.any() else None,
    }


def variance(groups):
    groups = [np.asarray(g, dtype=float) for g in groups if len(g) > 0]
    allr = np.concatenate(groups)
    n = len(allr)
    weights = np.array([len(g) / n for g in groups])
    within = float(np.sum(weights * np.array([np.var(g) for g in groups])))
    means = np.array([np.mean(g) for g in groups])
    grand = np.mean(allr)
    between = float(np.sum(weights * (means - grand) ** 2))
    return {"within": within, "between": between, "total": float(np.var(allr))}


def corr(feature, reward):
    f = np.concatenate([np.asarray(t, dtype=float) - np.mean(t) for t in feature if len(t) > 0])
    r = np.concatenate([np.asarray(t, dtype=float) - np.mean(t) for t in reward if len(t) > 0])
    if np.allclose(f, 0, atol=1e-12) or np.allclose(r, 0, atol=1e-12):
        return 0.0
    return float(np.corrcoef(f, r)[0, 1])


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: stats_oracle.py INPUT.json")
    with open(sys.argv[1], encoding="utf-8") as fh:
        cases = json.load(fh)
    out = {
        "pass_k": [dict(zip(("pass_at_k", "pass_hat_k"), pass_k(c["n"], c["c"], c["k"]))) for c in cases["pass_k"]],
        "mean_pass_k": [mean_pass_k(c["tasks"], c["k"]) for c in cases["mean_pass_k"]],
        "quantile": [float(np.quantile(np.asarray(c["values"]), c["q"])) for c in cases["quantile"]],
        "bootstrap": [bootstrap(c["values"], c["seed"]) for c in cases["bootstrap"]],
        "paired": [paired(c["before"], c["after"], c["seed"], c["exact"]) for c in cases["paired"]],
        "wilson": [wilson(c["x"], c["n"]) for c in cases["wilson"]],
        "kappa": [kappa(c["a"], c["b"]) for c in cases["kappa"]],
        "judge": [judge(c["judge"], c["gold"]) for c in cases["judge"]],
        "variance": [variance(c["groups"]) for c in cases["variance"]],
        "corr": [corr(c["feature"], c["reward"]) for c in cases["corr"]],
        "eval_variance": [
            {"mean": float(np.mean(c["values"])), "std": fnum(np.std(c["values"], ddof=1)) if len(c["values"]) > 1 else None}
            for c in cases["eval_variance"]
        ],
    }
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
