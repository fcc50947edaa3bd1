"""How many votes hold a model's place: the fewest removals that put any lower model above it.

For a fit and a model ``U`` (the top-rated one, or another near the top), ``hold`` searches
for the smallest set of votes whose removal, after refitting, puts *any* model rated below
``U`` above it -- "X stays the top-rated model unless 143 votes are removed". Checking only
the runner-up is not enough: a model further down with fewer, more lopsided votes can often
be lifted with fewer removals.

Every count reported is a real removal set, checked by an exact refit, so it is never below
the true minimum. The search tries, for each challenger ``j``:

1. Influence order (approximate maximum influence perturbation): removing one vote of
   category c (a (pair, outcome) cell) moves the gap theta_U - theta_j by about
   d_c = -(e_U - e_j)^T H^-1 x_c w_c (y_c - p_c). Votes are taken from the categories with
   the most negative d_c first; the smallest prefix that really swaps (after refitting) is
   found by doubling and bisection.
2. Re-linearised greedy: the same, but the influences are computed again at the refit after
   each step (steps of about half the votes the linear estimate still needs), because the
   first-order order goes wrong once removals change the fit's curvature.
3. Pruning: while the removal set is small, any single vote whose return keeps the swap is
   given back (all candidates refitted in one batch), until none can be.

The smallest count over challengers and methods is reported. ``tests/analysis`` compares it
with exhaustive enumeration on small arenas. The search is bounded by ``max_votes``: when no
removal of up to that many votes (of those tried) swaps, ``votes`` is None and ``searched``
says how far it looked.

Removals leave at least one vote in every (pair, outcome) category: emptying one could break
Ford's condition and give a model an infinite rating (not a place on the board), and keeping
it leaves the comparison graph, hence the refit, exactly that of the fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from analysis.bradley_terry import BTFit
from analysis.bt_solve import newton
from analysis.comparison_graph import STATUS_OK
from analysis.scale import SCALE

__all__ = ["PlaceHold", "hold", "place_robustness", "ranked_core"]

_TIE = 1e-6  # rating points: a pair this close after removals is tied, not swapped
_PRUNE_MAX = 200  # removal sets up to this size are pruned vote by vote


@dataclass(frozen=True)
class PlaceHold:
    """Votes that keep ``upper`` above every model rated below it."""

    upper: str
    challenger: str | None  # the model that overtakes after the smallest removal found
    gap: float  # rating points between ``upper`` and the next model below it
    votes: int | None  # the smallest removal found that puts a lower model above ``upper``
    searched: int  # removals up to this size were searched (the bound when ``votes`` is None)

    def to_dict(self) -> dict[str, object]:
        return {
            "upper": self.upper,
            "challenger": self.challenger,
            "gap": float(self.gap),
            "votes": self.votes,
            "searched": self.searched,
        }


class _Search:
    """Refits after removals, and first-order influences on a gap at a refit."""

    def __init__(self, fit: BTFit, upper: int, below: np.ndarray) -> None:
        prob = fit.problem
        self.prob, self.theta = prob, fit.theta[:, None]
        self.upper = upper  # local (fitted) index
        self.below = below  # local indices of the challengers
        self.available = np.maximum(prob.cat_count - 1, 0)
        self.design = prob._at.T.tocsr()[prob.cat_pair]  # (M, D)

    def refit(self, removed: np.ndarray) -> np.ndarray:
        """Parameters (D, R) after each column of ``removed`` (M, R) is taken away."""
        prob = self.prob
        removed = removed.reshape(len(self.available), -1)
        n, s = prob.pair_stats((prob.cat_count[:, None] - removed) * prob.cat_scale[:, None])
        start = np.repeat(self.theta, removed.shape[1], axis=1)
        return newton(prob, start, n, s, gtol=1e-10).theta

    def overtaken(self, theta: np.ndarray) -> np.ndarray:
        """Per column: the best challenger's lead over ``upper`` in points (> 0: overtaken)."""
        lead = (theta[self.below] - theta[self.upper]) * SCALE
        return np.asarray(lead.max(axis=0))

    def swaps(self, removed: np.ndarray) -> np.ndarray:
        return self.overtaken(self.refit(removed)) > _TIE

    def influence(self, theta: np.ndarray, removed: np.ndarray, j: int) -> np.ndarray:
        """Change of the gap theta_U - theta_j (points) per further vote removed from each
        category, at the refit ``theta`` after ``removed``."""
        prob = self.prob
        n = prob.pair_stats((prob.cat_count - removed) * prob.cat_scale)[0]
        h = prob.augment(prob.hessian(theta, n)[0])
        v = np.linalg.solve(h, _unit(len(h), self.upper) - _unit(len(h), j))
        p = expit(prob.logits(theta))[:, 0]
        resid = prob.cat_scale * (prob.cat_y - p[prob.cat_pair])
        return np.asarray(-(self.design @ v) * resid * SCALE)

    def gap(self, theta: np.ndarray, j: int) -> float:
        return float((theta[self.upper, 0] - theta[j, 0]) * SCALE)


def _unit(size: int, i: int) -> np.ndarray:
    e = np.zeros(size)
    e[i] = 1.0
    return e


def _take(order: np.ndarray, room: np.ndarray, m: int) -> np.ndarray:
    """The first ``m`` votes along ``order`` (categories) within ``room``, per category."""
    along = room[order]
    out = np.zeros(len(room), dtype=np.int64)
    out[order] = np.minimum(along, np.maximum(m - (np.cumsum(along) - along), 0))
    return out


def _smallest_prefix(
    search: _Search, base: np.ndarray, order: np.ndarray, room: np.ndarray, hi: int, cap: int
) -> tuple[int, np.ndarray] | None:
    """Smallest m <= cap with ``base`` + the first m votes along ``order`` swapping (doubling
    from ``hi``, then bisection), with that removal; None if even ``cap`` votes do not."""

    def removal(m: int) -> np.ndarray:
        return np.asarray(base + _take(order, room, m))

    total = min(int(room[order].sum()), cap)
    if total <= 0:
        return None
    lo, hi = 0, max(1, min(hi, total))
    while not search.swaps(removal(hi))[0]:
        if hi >= total:
            return None
        lo, hi = hi, min(2 * hi, total)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if search.swaps(removal(mid))[0]:
            hi = mid
        else:
            lo = mid
    return hi, removal(hi)


def _helpful(delta: np.ndarray, room: np.ndarray) -> np.ndarray:
    order = np.argsort(delta, kind="stable")
    return order[(delta[order] < 0) & (room[order] > 0)]


def _estimate(delta: np.ndarray, order: np.ndarray, room: np.ndarray, gap: float) -> int | None:
    """Votes along ``order`` the linear influences say close ``gap`` (None: they cannot)."""
    cum = np.cumsum(delta[order] * room[order])
    hit = np.flatnonzero(cum <= -gap)
    if not len(hit):
        return None
    c = int(hit[0])
    before = cum[c - 1] if c else 0.0
    return int(room[order[:c]].sum() + np.ceil((-gap - before) / delta[order[c]]))


def _first_order(search: _Search, j: int, cap: int) -> np.ndarray | None:
    theta = search.theta
    zero = np.zeros(len(search.available), dtype=np.int64)
    delta = search.influence(theta, zero, j)
    order = _helpful(delta, search.available)
    if not len(order):
        return None
    estimate = _estimate(delta, order, search.available, search.gap(theta, j)) or 1
    found = _smallest_prefix(search, zero, order, search.available, estimate, cap)
    return None if found is None else found[1]


def _relinearised(search: _Search, j: int, cap: int) -> np.ndarray | None:
    removed = np.zeros(len(search.available), dtype=np.int64)
    theta = search.theta
    while int(removed.sum()) < cap:
        room = search.available - removed
        delta = search.influence(theta, removed, j)
        order = _helpful(delta, room)
        if not len(order):
            return None
        need = _estimate(delta, order, room, search.gap(theta, j))
        step = max(1, (need or int(room[order].sum())) // 2)
        step = min(step, cap - int(removed.sum()))
        trial = removed + _take(order, room, step)
        theta = search.refit(trial)
        if search.overtaken(theta)[0] > _TIE:
            found = _smallest_prefix(search, removed, order, room, 1, step)
            return trial if found is None else found[1]
        removed = trial
    return None


def _prune(search: _Search, removed: np.ndarray) -> np.ndarray:
    """Give back single votes while the swap holds (the one leaving the widest lead first)."""
    while 0 < removed.sum() <= _PRUNE_MAX:
        cats = np.flatnonzero(removed)
        trials = np.repeat(removed[:, None], len(cats), axis=1)
        trials[cats, np.arange(len(cats))] -= 1
        lead = search.overtaken(search.refit(trials))
        best = int(np.argmax(lead))
        if lead[best] <= _TIE:
            break
        removed = trials[:, best]
    return removed


def hold(
    fit: BTFit, upper: str, *, below: Sequence[str], max_votes: int | None = None
) -> PlaceHold:
    """The fewest votes found whose removal puts any model of ``below`` above ``upper``."""
    prob = fit.problem
    index = {m: i for i, m in enumerate(fit.models)}
    local = {int(m): i for i, m in enumerate(prob.fitted)}
    u = local[index[upper]]
    rivals = [local[index[m]] for m in below]
    gap = float(fit.rating[index[upper]] - max(fit.rating[index[m]] for m in below))
    search = _Search(fit, u, np.array(rivals, dtype=np.int64))
    cap = int(search.available.sum()) if max_votes is None else int(max_votes)
    cap = min(cap, int(search.available.sum()))
    best: np.ndarray | None = None
    for j in rivals:
        bound = cap if best is None else int(best.sum()) - 1
        if bound <= 0:
            break
        for method in (_first_order, _relinearised):
            found = method(search, j, bound)
            if found is not None and found.sum() <= bound:
                best, bound = found, int(found.sum()) - 1
    if best is None:
        return PlaceHold(upper, None, gap, None, cap)
    best = _prune(search, best)
    theta = search.refit(best)
    lead = (theta[search.below, 0] - theta[u, 0]) * SCALE
    challenger = below[int(np.argmax(lead))]
    return PlaceHold(upper, challenger, gap, int(best.sum()), cap)


def ranked_core(fit: BTFit, *, shown: Sequence[str] | np.ndarray | None = None) -> list[str]:
    """The shown core models with a finite rating, best first: the places a board ranks."""
    ok = np.array([s == STATUS_OK for s in fit.status], dtype=bool) & np.isfinite(fit.rating)
    if shown is not None:
        arr = np.asarray(shown)
        ok &= arr if arr.dtype == bool else np.isin(np.array(fit.models), arr)
    return [
        fit.models[int(i)]
        for i in np.argsort(-np.where(ok, fit.rating, -np.inf), kind="stable")
        if ok[i]
    ]


def place_robustness(
    fit: BTFit,
    *,
    shown: Sequence[str] | np.ndarray | None = None,
    places: int = 1,
    max_votes: int | None = None,
) -> list[PlaceHold]:
    """:func:`hold` for each of the ``places`` top-rated shown core models, best first,
    against every shown core model rated below it."""
    ranked = ranked_core(fit, shown=shown)
    return [
        hold(fit, ranked[k], below=ranked[k + 1 :], max_votes=max_votes)
        for k in range(min(places, len(ranked) - 1))
    ]
