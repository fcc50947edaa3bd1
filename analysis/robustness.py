"""How many votes hold each rank: the fewest removals that would swap two adjacent models.

Computes, for a fit and each pair of neighbours in rating order (among the shown models), the
smallest number of votes whose removal would put the lower model above the upper one --
"#1 holds unless 143 votes are removed" -- in two steps:

1. Influence (approximate maximum influence perturbation): removing one vote of category c
   (a (pair, outcome) cell) moves the parameters by about -H^-1 x_c w_c (y_c - p_c), so the
   gap theta_i - theta_j by d_c = -(e_i - e_j)^T H^-1 x_c w_c (y_c - p_c). Taking votes from
   the categories with the most negative d_c first, the estimate is the first count at which
   the summed d_c reaches -gap (``votes_estimate``; one sort over categories per pair).
2. Validation by exact refits: along that same order, the smallest prefix whose removal really
   swaps the pair after refitting, found by doubling and bisection (about 2 log2(n) refits,
   each a warm-started Newton solve on the changed counts). ``votes`` is that validated count: a set of
   that many votes exists whose removal swaps the pair, so it is an upper bound on the true
   minimum, and the influence order makes it close to it (``tests/analysis/test_robustness.py``
   compares with brute force over all removal sets on small arenas).

The linear estimate is optimistic for large removals (the fit's curvature changes), which the
refits correct. Removals leave at least one vote in every (pair, outcome) category: emptying
one could break Ford's condition and give a model an infinite rating (not a swap on the
board), and keeping it leaves the graph, hence the refit, exactly that of the fit. Pairs that
no removal along the order can swap get ``None``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from analysis.bradley_terry import BTFit
from analysis.comparison_graph import STATUS_OK
from analysis.scale import SCALE

__all__ = ["RankFlip", "rank_robustness"]

_TIE = 1e-6  # rating points: a pair this close after removals is tied, not swapped


@dataclass(frozen=True)
class RankFlip:
    """Votes that hold ``upper`` above ``lower`` (neighbours in rating order)."""

    upper: str
    lower: str
    gap: float  # rating points
    votes_estimate: int | None  # influence-based
    votes: int | None  # validated by exact refits (None if not validated or not found)

    def to_dict(self) -> dict[str, object]:
        return {
            "upper": self.upper,
            "lower": self.lower,
            "gap": float(self.gap),
            "votes_estimate": self.votes_estimate,
            "votes": self.votes,
        }


class _Refit:
    """Gap between two models after removing votes (exact warm-started Newton refit).

    Removals never empty a category, so the beats graph, the core and the virtual ties stay
    those of the fit, and the refit is the full fit of the reduced data."""

    def __init__(self, fit: BTFit) -> None:
        self.fit, self.prob = fit, fit.problem

    def gap(self, li: int, lj: int, removed: np.ndarray) -> float:
        prob = self.prob
        n, s = prob.pair_stats((prob.cat_count - removed) * prob.cat_scale)
        res = prob.newton(self.fit.theta[:, None].copy(), n, s, gtol=1e-10)
        return float((res.theta[li, 0] - res.theta[lj, 0]) * SCALE)


def _removal(order: np.ndarray, counts: np.ndarray, m: int, size: int) -> np.ndarray:
    """The first ``m`` votes along ``order`` (categories), as removals per category."""
    taken = np.minimum(counts[order], np.maximum(m - (np.cumsum(counts[order]) - counts[order]), 0))
    out = np.zeros(size, dtype=np.int64)
    out[order] = taken
    return out


def rank_robustness(
    fit: BTFit,
    *,
    shown: Sequence[str] | np.ndarray | None = None,
    validate: bool = True,
    max_pairs: int | None = None,
) -> list[RankFlip]:
    """One :class:`RankFlip` per neighbouring pair of shown core models, best first.

    ``max_pairs`` limits the work to the top of the board (e.g. 1 for "#1 vs #2")."""
    prob = fit.problem
    ok = np.array([s == STATUS_OK for s in fit.status], dtype=bool) & np.isfinite(fit.rating)
    if shown is not None:
        arr = np.asarray(shown)
        mask = arr if arr.dtype == bool else np.isin(np.array(fit.models), arr)
        ok &= mask
    ranked = [
        int(i) for i in np.argsort(-np.where(ok, fit.rating, -np.inf), kind="stable") if ok[i]
    ]
    pairs = list(itertools.pairwise(ranked))[:max_pairs]
    if not pairs:
        return []
    n, _ = prob.full_stats()
    hinv = np.linalg.inv(prob.augment(prob.hessian(fit.theta[:, None], n)[0]))
    p = expit(prob.logits(fit.theta[:, None]))[:, 0]
    resid = prob.cat_scale * (prob.cat_y - p[prob.cat_pair])  # per-vote score coefficient
    design = prob._at.T.tocsr()[prob.cat_pair]  # (M, D)
    refit = _Refit(fit) if validate else None
    available = np.maximum(prob.cat_count - 1, 0)
    out = []
    for i, j in pairs:
        li, lj = (int(np.searchsorted(prob.fitted, m)) for m in (i, j))
        v = hinv[:, li] - hinv[:, lj]
        delta = -(design @ v) * resid * SCALE  # gap change per removed vote
        gap = float(fit.rating[i] - fit.rating[j])
        order = np.argsort(delta, kind="stable")
        order = order[(delta[order] < 0) & (available[order] > 0)]
        cum = np.cumsum(delta[order] * available[order])
        estimate = None
        hit = np.flatnonzero(cum <= -gap)
        if len(hit):
            c = hit[0]
            before = cum[c - 1] if c else 0.0
            extra = np.ceil((-gap - before) / delta[order[c]])
            estimate = int(available[order[:c]].sum() + extra)
        votes = None
        if refit is not None and len(order):
            votes = _validate(refit, li, lj, order, available, estimate)
        out.append(RankFlip(fit.models[i], fit.models[j], gap, estimate, votes))
    return out


def _validate(
    refit: _Refit, i: int, j: int, order: np.ndarray, cat_count: np.ndarray, estimate: int | None
) -> int | None:
    """Smallest m (doubling, then bisection) whose removal along ``order`` swaps i and j."""
    total = int(cat_count[order].sum())
    size = len(cat_count)

    def swapped(m: int) -> bool:
        return refit.gap(i, j, _removal(order, cat_count, m, size)) < -_TIE

    lo, hi = 0, max(1, min(estimate or 1, total))  # invariant: not swapped at lo
    while not swapped(hi):
        if hi >= total:
            return None
        lo, hi = hi, min(2 * hi, total)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if swapped(mid):
            hi = mid
        else:
            lo = mid
    return hi
