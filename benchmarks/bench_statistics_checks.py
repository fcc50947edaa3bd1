"""The validation runs behind docs/ratings.md's claims on robustness and correlation intervals.

* ``robustness``: small simulated arenas (3-6 models, 12-60 battles): the votes that hold #1
  found by ``analysis.robustness`` against exhaustive enumeration of removals
  (``tests/analysis/robustness_exact.py``), counting overstatements and missed removals.
* ``correlation``: coverage of the Fisher-z intervals of ``analysis.correlation`` on
  bivariate-normal leaderboards with a known correlation, beside the percentile bootstrap over
  models that they replaced (reimplemented here as the reference).

Run: ``.venv/bin/python benchmarks/bench_statistics_checks.py [robustness|correlation]``.
Prints markdown tables with the machine and date.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import machine_info, machine_line

from analysis.bradley_terry import fit_bt
from analysis.correlation import correlate_arrays
from analysis.robustness import place_robustness
from tests.analysis.robustness_exact import (
    LIMIT,
    count_vectors,
    exact_minimum,
    small_arena,
)


def robustness(arenas: int = 400, seed: int = 7) -> None:
    rng = np.random.default_rng(seed)
    checked = skipped = over = missed = found = 0
    excess: list[int] = []
    t_search = t_exact = 0.0
    while checked < arenas:
        fit = fit_bt(small_arena(rng))
        t0 = time.perf_counter()
        holds = place_robustness(fit, places=1, max_votes=LIMIT)
        t_search += time.perf_counter() - t0
        if not holds:
            continue
        first = holds[0]
        ok = [m for m, s in zip(fit.models, fit.status, strict=True) if s == "ok"]
        below = [m for m in ok if m != first.upper]
        room = np.maximum(fit.problem.cat_count - 1, 0)
        if count_vectors(room, LIMIT) > 2_000_000:
            skipped += 1
            continue
        t0 = time.perf_counter()
        exact = exact_minimum(fit, first.upper, below, LIMIT)
        t_exact += time.perf_counter() - t0
        checked += 1
        if first.votes is None:
            missed += exact is not None
        else:
            found += 1
            assert exact is not None and exact <= first.votes  # a real removal set
            over += exact < first.votes
            excess.append(first.votes - exact)
    print(f"Robustness of #1, {machine_line(machine_info())}")
    print(
        "| arenas | #1 falls within the bound | overstated | missed (none found, one exists) | max excess | search | enumeration |"
    )
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {checked} ({skipped} too large to enumerate skipped) | {found} | {over} "
        f"({over / max(found, 1):.1%}) | {missed} | {max(excess, default=0)} | "
        f"{t_search / checked * 1e3:.0f} ms per arena | {t_exact:.0f} s |"
    )


def _bootstrap_interval(
    x: np.ndarray, y: np.ndarray, method: str, rng: np.random.Generator
) -> tuple[float, float]:
    """The percentile bootstrap over models the Fisher-z interval replaced (1,000 rounds)."""
    n = len(x)
    index = rng.integers(0, n, size=(1_000, n))
    xb, yb = x[index], y[index]
    if method == "spearman":
        xb, yb = stats.rankdata(xb, axis=1), stats.rankdata(yb, axis=1)
    xc, yc = xb - xb.mean(1, keepdims=True), yb - yb.mean(1, keepdims=True)
    den = np.sqrt((xc * xc).sum(1) * (yc * yc).sum(1))
    r = (xc * yc).sum(1)[den > 0] / den[den > 0]
    lo, hi = np.quantile(r, [0.025, 0.975])
    return float(lo), float(hi)


def correlation(reps: int = 2_000, boot_reps: int = 500, seed: int = 11) -> None:
    print(f"Correlation interval coverage (nominal 95%), {machine_line(machine_info())}")
    print("| method | true rho | n = 5 | 8 | 12 | 20 | 30 |")
    print("|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(seed)
    for method in ("pearson", "spearman"):
        for rho in (0.0, 0.3, 0.6, 0.9):
            true = 6 / math.pi * math.asin(rho / 2) if method == "spearman" else rho
            fisher, boot = [], []
            for n in (5, 8, 12, 20, 30):
                cov = [[1.0, rho], [rho, 1.0]]
                hits = bhits = 0
                for i in range(reps):
                    xy = rng.multivariate_normal([0.0, 0.0], cov, size=n)
                    res = correlate_arrays(xy[:, 0], xy[:, 1], method=method)
                    hits += res.ci_lower <= true <= res.ci_upper
                    if i < boot_reps:
                        lo, hi = _bootstrap_interval(xy[:, 0], xy[:, 1], method, rng)
                        bhits += lo <= true <= hi
                fisher.append(hits / reps)
                boot.append(bhits / boot_reps)
            print(f"| {method} Fisher z | {rho} | " + " | ".join(f"{c:.1%}" for c in fisher) + " |")
            print(f"| {method} bootstrap | {rho} | " + " | ".join(f"{c:.1%}" for c in boot) + " |")


if __name__ == "__main__":
    which = sys.argv[1:] or ["robustness", "correlation"]
    if "robustness" in which:
        robustness()
    if "correlation" in which:
        correlation()
