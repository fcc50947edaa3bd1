"""Battle weights for the rating fit: inverse sampling propensity and inverse pair counts.

Computes weight columns for :class:`~analysis.grouping.GroupedCounts` (``weight`` = the sum
of a row's battle weights). A weighted fit solves sum_t w_t (y_t - p_t) x_t = 0.

Why weights at all. Under a correct Bradley-Terry model, how pairs are chosen does not bias
the fit. But the arena's model is an approximation (users differ, completions vary in speed
and length from one request to the next), and then the fit estimates the ratings that best
describe the *sampled* mixture of pairs and conditions. The latency-aware sampler draws a pair
more often when both models are fast at that moment, so a model with variable latency is seen
mostly at its fast moments, when it also wins more. Weighting each battle by 1 / (P * pi_t),
with pi_t the probability with which the sampler drew that pair at that time and P the number
of pairs, makes the weighted estimating equation the one of a *uniform* sampler: the fit then
targets the ratings a uniform arena would give (``inverse_propensity_weights``). The price is
variance: the interval widens with the spread of the weights (Kish's effective sample size
(sum w)^2 / sum w^2). ``max_weight`` clips extreme weights (bias for variance).

arena-rank's reweighting (``inverse_pair_count_weights``) gives every *pair* the same total
weight, w = 1 / max(n_pair, min_pair_count) per battle: a design-based correction for uneven
pair counts that needs no propensities, but ignores when (under which conditions) a pair was
drawn.

Per-user influence bound (``influence_weights``). However pairs are sampled, a user who
votes a thousand times weighs a thousand times one vote: enough, in a 20,000-vote arena, to buy
a rank (docs/ratings.md, "Vote rigging"). The bound caps what one user's votes can weigh: first
a user's repeated identical contexts count once together (``dedup_weights``: the votes of one
(user, context fingerprint) share a weight of 1), then a day's weight is capped at ``cap_day``
and the user's whole weight at ``cap_total`` by scaling all their votes down alike. A user below
both caps keeps weight 1 on every vote. It multiplies whatever weights the board uses (pair
count, propensity), so it changes nothing for the ordinary voter.

Exactness: weights enter the point estimate and the user-clustered variance through row sums
only (exact for any per-battle weights). The iid sandwich and the iid bootstrap take each
battle's weight as its row's mean weight -- exact for pair-level (per-cell) weights.
"""

from __future__ import annotations

import numpy as np

from analysis.grouping import GroupedCounts

__all__ = [
    "dedup_weights",
    "effective_sample_size",
    "influence_weights",
    "inverse_pair_count_weights",
    "inverse_propensity_weights",
    "pair_propensity_weights",
]


def inverse_propensity_weights(
    propensity: np.ndarray, *, n_models: int, max_weight: float | None = None
) -> np.ndarray:
    """Per-battle weights 1 / (P * pi) for sampler pair probabilities ``pi`` (0 < pi <= 1).

    ``P = n_models (n_models - 1) / 2`` is the number of pairs, so a uniform sampler gives
    weight 1. ``max_weight`` (optional) clips the weights from above.
    """
    pi = np.asarray(propensity, dtype=float)
    if np.any(~np.isfinite(pi)) or np.any(pi <= 0) or np.any(pi > 1):
        raise ValueError("propensities must be in (0, 1]")
    n_pairs = n_models * (n_models - 1) / 2
    w = 1.0 / (n_pairs * pi)
    if max_weight is not None:
        w = np.minimum(w, max_weight)
    return w


def pair_propensity_weights(
    counts: GroupedCounts, pair_probability: np.ndarray, *, max_weight: float | None = None
) -> GroupedCounts:
    """``counts`` weighted by a per-pair (per-cell) sampler probability matrix (K, K).

    ``pair_probability[i, j]`` is the probability of drawing the unordered pair {i, j}
    (symmetric; only the entries of pairs that were played are read).
    """
    p = np.asarray(pair_probability, dtype=float)
    k = counts.n_models
    if p.shape != (k, k):
        raise ValueError("pair_probability must be a (K, K) matrix")
    w = inverse_propensity_weights(p[counts.a, counts.b], n_models=k, max_weight=max_weight)
    return counts.with_weight(w * counts.count)


def inverse_pair_count_weights(counts: GroupedCounts, *, min_pair_count: int = 50) -> GroupedCounts:
    """arena-rank's reweighting: every battle of pair {i, j} weighs 1 / max(n_ij, floor)."""
    k = counts.n_models
    lo, hi = np.minimum(counts.a, counts.b), np.maximum(counts.a, counts.b)
    key = lo * k + hi
    n_pair = np.bincount(key, weights=counts.count, minlength=k * k)[key]
    return counts.with_weight(counts.count / np.maximum(n_pair, min_pair_count))


def effective_sample_size(weights: np.ndarray) -> float:
    """Kish's effective number of battles, (sum w)^2 / sum w^2, for per-battle weights."""
    w = np.asarray(weights, dtype=float)
    total = float((w**2).sum())
    return float(w.sum() ** 2 / total) if total > 0 else 0.0


def _dense(x: np.ndarray) -> tuple[np.ndarray, int]:
    """Values as dense indices 0..n-1 (n returned); one 1-D sort, fast for a million votes."""
    _values, idx = np.unique(x, return_inverse=True)
    return idx.ravel().astype(np.int64), len(_values)


def _group_sum(first: np.ndarray, second: np.ndarray | None, values: np.ndarray) -> np.ndarray:
    """For each element, the sum of ``values`` over the elements with its key (``first``, or
    the pair (``first``, ``second``))."""
    key, _n = _dense(first)
    if second is not None:
        inner, n_inner = _dense(second)
        key, _n = _dense(key * n_inner + inner)
    return np.asarray(np.bincount(key, weights=values)[key])


def dedup_weights(user: np.ndarray, context: np.ndarray) -> np.ndarray:
    """Per-vote weight 1 / (votes of this user on this context): repeats count once together.

    ``context`` is any integer fingerprint per vote; a negative value means "not known"
    (no context sent), and such votes keep weight 1.
    """
    u = np.asarray(user, dtype=np.int64).ravel()
    c = np.asarray(context, dtype=np.int64).ravel()
    if u.shape != c.shape:
        raise ValueError("user and context must have one entry per vote")
    w = np.ones(len(u))
    known = c >= 0
    if known.any():
        w[known] = 1.0 / _group_sum(u[known], c[known], np.ones(int(known.sum())))
    return w


def influence_weights(
    user: np.ndarray,
    day: np.ndarray,
    *,
    cap_day: float | None,
    cap_total: float | None,
    base: np.ndarray | None = None,
) -> np.ndarray:
    """Per-vote weights that bound each user's weight to ``cap_day`` per day and ``cap_total``
    in all (None: no bound), applied on top of ``base`` (e.g. ``dedup_weights``; default 1).

    w = base x min(1, cap_day / D_ud) x min(1, cap_total / T_u), with D_ud the user's base
    weight on that day and T_u their total after the day cap: the result sums to at most the
    caps per user-day and per user, and equals ``base`` for a user below both.
    """
    u = np.asarray(user, dtype=np.int64).ravel()
    d = np.asarray(day, dtype=np.int64).ravel()
    if u.shape != d.shape:
        raise ValueError("user and day must have one entry per vote")
    w = np.ones(len(u)) if base is None else np.asarray(base, dtype=float).ravel().copy()
    if w.shape != u.shape or np.any(w < 0):
        raise ValueError("base must be one non-negative weight per vote")
    if len(u) == 0:
        return w
    for cap in (cap_day, cap_total):
        if cap is not None and cap <= 0:
            raise ValueError("caps must be positive")
    if cap_day is not None:
        per_day = _group_sum(u, d, w)
        w = w * np.minimum(1.0, cap_day / np.maximum(per_day, 1e-300))
    if cap_total is not None:
        total = _group_sum(u, None, w)
        w = w * np.minimum(1.0, cap_total / np.maximum(total, 1e-300))
    return w
