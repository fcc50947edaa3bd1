"""Honest interval bounds for models whose maximum-likelihood rating is infinite.

A model outside the Ford core (status ``unbounded_high``, ``unbounded_low`` or ``unbounded``,
see ``comparison_graph``) gets a finite rating only from the virtual tie the fit adds. Any
interval built around that rating (bootstrap or sandwich) describes the virtual tie, not the
data: a model with 12 straight wins got a narrow interval and rank 1. So these models get:

* on the unbounded side, no bound at all (+inf above ``unbounded_high``, -inf below
  ``unbounded_low``, both for ``unbounded``): the data allow any rating there;
* on the other side, a bound from the real battles only: the rating t at which the observed
  results become less likely than (1 - level) / 2 relative to the best fit, log L(t) =
  sup log L + log(0.025), with every other model held at its fit (a profile over this model
  alone). For a model that only won, L(t) is the probability of that run of wins, so this is
  the exact (Clopper-Pearson-like) one-sided 97.5% bound: for 12 wins against one average
  model, sigma(t)^12 = 0.025, t = 1.02 log-odds = 178 points above it, where the virtual tie
  puts the model ~560 points above. (The likelihood-ratio rule, chi2_1 / 2 = 1.92 instead of
  -log 0.025 = 3.69, would say 304 points: too sure at the boundary of the parameter space.)

Rank (UB) needs both bounds finite, so such a model has no rank, while its finite lower bound
(real data) still counts against models below it.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy.special import log_expit

from analysis.bradley_terry import BTFit
from analysis.comparison_graph import (
    STATUS_UNBOUNDED,
    STATUS_UNBOUNDED_HIGH,
    STATUS_UNBOUNDED_LOW,
)
from analysis.scale import SCALE

__all__ = ["apply_unbounded_bounds", "profile_bound"]

_FAR = 60.0  # log-odds: beyond this the likelihood of a side is flat to machine precision


def profile_bound(
    fit: BTFit, model: int, *, side: Literal["lower", "upper"], level: float = 0.95
) -> float:
    """The finite one-sided bound (rating points) of one model on its bounded side.

    ``side="lower"`` for an ``unbounded_high`` model, ``"upper"`` for ``unbounded_low``.
    """
    prob = fit.problem
    local = int(np.searchsorted(prob.fitted, model))
    if local >= prob.k or prob.fitted[local] != model:
        raise ValueError("the model is not rated")
    n, s = prob.full_stats()
    n, s = n[:, 0], s[:, 0]
    mine = (prob.pi == local) | (prob.pj == local)
    sign = np.where(prob.pi[mine] == local, 1.0, -1.0)
    theta = fit.theta
    rest = prob.logits(theta)[mine] - sign * theta[local]  # logit without this model's term
    nm, sm = n[mine], s[mine]

    def loglik(t: np.ndarray) -> np.ndarray:
        lg = rest[:, None] + sign[:, None] * t[None, :]
        return np.asarray(
            (sm[:, None] * log_expit(lg) + (nm - sm)[:, None] * log_expit(-lg)).sum(axis=0)
        )

    # concave in t: bracket the maximum on a grid, then golden-section search
    grid = theta[local] + np.linspace(-_FAR, _FAR, 241)
    best = int(np.argmax(loglik(grid)))
    a, b = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    for _ in range(60):
        m1, m2 = a + 0.382 * (b - a), a + 0.618 * (b - a)
        f1, f2 = loglik(np.array([m1, m2]))
        a, b = (a, m2) if f1 >= f2 else (m1, b)
    t_sup = 0.5 * (a + b)
    target = loglik(np.array([t_sup]))[0] + np.log(0.5 * (1.0 - level))
    direction = 1.0 if side == "lower" else -1.0  # the bounded side is against `direction`
    lo, hi = theta[local] - direction * _FAR, t_sup  # loglik(lo) < target <= loglik(hi)
    if loglik(np.array([lo]))[0] >= target:  # the data do not bound this side either
        return -direction * np.inf
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if loglik(np.array([mid]))[0] < target:
            lo = mid
        else:
            hi = mid
    return float(fit.rating[model] + SCALE * (0.5 * (lo + hi) - theta[local]))


def apply_unbounded_bounds(
    fit: BTFit, lower: np.ndarray, upper: np.ndarray, *, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Copies of ``lower``/``upper`` with the bounds of unbounded models replaced."""
    lower, upper = np.array(lower, dtype=float), np.array(upper, dtype=float)
    if fit.structure.ford_condition or not fit.structure.main.any():
        return lower, upper  # nothing is unbounded
    for i, status in enumerate(fit.status):
        if status == STATUS_UNBOUNDED_HIGH:
            lower[i] = profile_bound(fit, i, side="lower", level=level)
            upper[i] = np.inf
        elif status == STATUS_UNBOUNDED_LOW:
            lower[i] = -np.inf
            upper[i] = profile_bound(fit, i, side="upper", level=level)
        elif status == STATUS_UNBOUNDED:
            lower[i], upper[i] = -np.inf, np.inf
    return lower, upper
