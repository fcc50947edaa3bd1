"""How many added votes would put a lower model above a given one: the cost of rigging a place.

``robustness`` asks how many of the *existing* votes hold a place; a rigger instead *adds*
votes. For the top-rated model ``U`` and each model ``j`` rated below it that has met ``U``,
:func:`overtake_cost` finds the fewest added battles that ``j`` wins against ``U`` after which
the refitted ``j`` rates above ``U``, and reports the smallest over challengers. Direct wins
are the simplest attack to state, not always the cheapest: votes against ``U``'s other rivals
move it too, so the figure is an estimate of the effort, not a lower bound on it.

Added battles weigh as much as an average battle of the fit (the fit's weights are rescaled
to one per battle). With the position-aware model they are split between the two orders the
pair was served in. The search bisects the added count; each step is one exact refit. Challengers are tried best first, each against the fewest
votes found so far, so most need a single refit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from analysis.bradley_terry import BTFit
from analysis.bt_solve import newton
from analysis.scale import SCALE

__all__ = ["OvertakeCost", "overtake_cost"]

_TIE = 1e-6  # rating points: as in analysis.robustness


@dataclass(frozen=True)
class OvertakeCost:
    """The fewest added wins of ``challenger`` over ``upper`` that put it above ``upper``."""

    upper: str
    challenger: str | None
    votes: int | None  # None: no challenger overtakes within ``searched`` added votes
    searched: int
    # a vote of raw weight 1 counts this much in the fit (weights are rescaled to one per
    # battle), so an account whose weights are capped at C adds at most C * unit
    unit: float = 1.0

    def accounts(self, cap: float) -> int | None:
        """The fewest accounts whose votes, each weighing at most ``cap``, add ``votes``."""
        if self.votes is None or cap <= 0:
            return None
        return max(1, math.ceil(self.votes / (cap * self.unit)))


def _lead(fit: BTFit, n: np.ndarray, s: np.ndarray, u: int, j: int) -> float:
    theta = newton(fit.problem, fit.theta[:, None], n, s, gtol=1e-10).theta
    return float((theta[j, 0] - theta[u, 0]) * SCALE)


def _cost(fit: BTFit, u: int, j: int, limit: int) -> int | None:
    prob = fit.problem
    met = ((prob.pi == u) & (prob.pj == j)) | ((prob.pi == j) & (prob.pj == u))
    if not met.any():
        return None  # never compared: the added votes would need a new pair
    n0, s0 = prob.full_stats()
    # one added vote, split over the orders the pair was served in; s counts the first
    # model's points, so it grows only where j is first
    dn = (met / met.sum())[:, None]
    ds = dn * (prob.pi == j)[:, None]

    def overtakes(votes: int) -> bool:
        return _lead(fit, n0 + votes * dn, s0 + votes * ds, u, j) > _TIE

    if not overtakes(limit):
        return None
    lo, hi = 0, limit  # lo does not overtake (the fit itself ranks u above j), hi does
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if overtakes(mid) else (mid, hi)
    return hi


def overtake_cost(
    fit: BTFit, upper: str, *, below: Sequence[str], max_votes: int | None = None
) -> OvertakeCost:
    """The fewest added direct wins after which some model of ``below`` rates above
    ``upper`` (searched up to ``max_votes``, by default ten times the fit's battles)."""
    prob = fit.problem
    index = {m: i for i, m in enumerate(fit.models)}
    local = {int(m): i for i, m in enumerate(prob.fitted)}
    u = local[index[upper]]
    limit = int(max_votes if max_votes is not None else max(10 * prob.cat_count.sum(), 1))
    best: tuple[int, str] | None = None
    for name in below:
        bound = limit if best is None else best[0] - 1
        if bound < 1:
            break
        votes = _cost(fit, u, local[index[name]], bound)
        if votes is not None:
            best = (votes, name)
    unit = float(prob.weight_factor) if prob.weighted else 1.0
    if best is None:
        return OvertakeCost(upper, None, None, limit, unit)
    return OvertakeCost(upper, best[1], best[0], limit, unit)
