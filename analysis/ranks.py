"""Rank (UB) from interval bounds.

Computes, from per-model lower and upper bounds, Rank (UB) = 1 + the number of models whose
lower bound is strictly above this model's upper bound: the best rank the model could claim
given the uncertainty (Chatbot Arena's convention). Models can share a rank; ranks need not be
consecutive. Models without two finite bounds (not rated, or unbounded on one side, see
``unbounded``) get rank 0, which means "no rank"; a finite lower bound still counts against
the models below it (a model with 200 wins and no loss is surely above the weak ones).
"""

from __future__ import annotations

import numpy as np

__all__ = ["intervals_apart", "rank_ub"]


def rank_ub(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Rank (UB) per model (int); 0 where either bound is not finite."""
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    if lower.shape != upper.shape or lower.ndim != 1:
        raise ValueError("lower and upper must be 1-D arrays of the same length")
    ranked = np.isfinite(lower) & np.isfinite(upper)
    rank = np.zeros(len(lower), dtype=np.int64)
    lows = np.sort(lower[np.isfinite(lower)])
    # number of finite lower bounds strictly greater than each upper bound
    above = len(lows) - np.searchsorted(lows, upper[ranked], side="right")
    rank[ranked] = 1 + above
    return rank


def intervals_apart(
    first: tuple[float | None, float | None], second: tuple[float | None, float | None]
) -> bool | None:
    """Whether two (lower, upper) intervals do not overlap; None if either is not finite.

    The test behind a rank change shown as a number rather than "within noise": a model's
    interval on a category's board and on the overall board that overlap leave its rank
    change within what sampling alone produces."""
    bounds = [*first, *second]
    if any(b is None or not np.isfinite(b) for b in bounds):
        return None
    lo1, hi1, lo2, hi2 = (float(b) for b in bounds)  # type: ignore[arg-type]
    return hi1 < lo2 or hi2 < lo1
