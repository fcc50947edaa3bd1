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

Exactness: weights enter the point estimate and the user-clustered variance through row sums
only (exact for any per-battle weights). The iid sandwich and the iid bootstrap take each
battle's weight as its row's mean weight -- exact for pair-level (per-cell) weights.
"""

from __future__ import annotations

import numpy as np

from analysis.grouping import GroupedCounts

__all__ = [
    "effective_sample_size",
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
