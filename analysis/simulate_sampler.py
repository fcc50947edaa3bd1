"""Simulated arena with a latency-aware pair sampler: per-battle propensities and known truth.

Computes battles in ``periods`` time steps. In each step every model has a latency
L_i = exp(mu_i + sd z) (log-normal; load varies over time), the sampler draws pairs with

    pi_ij = floor / P + (1 - floor) * softmax_ij(-max(L_i, L_j) / tau)

(the slower model sets the latency the developer feels; every pair keeps ``floor`` of its
uniform share, as the serving sampler guarantees), and the top completion wins with
sigma(c (R_a - R_b) - beta (ln L_a - ln L_b)): a slower completion is accepted less often
(``latency_effect`` = beta, log-odds per unit of log-latency difference). Positions are fair
coins; users (clusters) are drawn uniformly among ``n_users``.

The sampler's choice depends on the current latencies, which also move the outcomes, so the
unweighted fit sees a variable-latency model mostly at its fast moments. The truth is what a
*uniform* sampler targets: the Bradley-Terry fit of the pair scores averaged over periods with
every pair equally weighted (``simulate_users.fit_pair_scores``). Each battle carries pi, the
probability with which its pair was drawn, for ``weights.inverse_propensity_weights``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.grouping import OUTCOME_A, OUTCOME_B, GroupedCounts
from analysis.scale import LOG_ODDS_PER_POINT
from analysis.simulate_users import Arena, fit_pair_scores
from analysis.weights import inverse_propensity_weights

__all__ = ["SampledArena", "simulate_latency_sampler"]


@dataclass(frozen=True)
class SampledArena(Arena):
    """One row per battle; ``truth`` is the uniform-sampler target on the mean-1000 scale."""

    propensity: np.ndarray  # probability with which the battle's pair was drawn

    def grouped(self, *, ipw: bool = False, max_weight: float | None = None) -> GroupedCounts:
        """Counts per (user, top, bottom, outcome); with ``ipw`` weighted by 1 / (P pi)."""
        weight = None
        if ipw:
            weight = inverse_propensity_weights(
                self.propensity, n_models=len(self.models), max_weight=max_weight
            )
        return self._counts(with_users=True, weight=weight)


def simulate_latency_sampler(
    ratings: np.ndarray,
    n: int,
    *,
    log_latency: np.ndarray,
    latency_sd: float = 0.5,
    latency_effect: float = 0.5,
    tau: float = 1.0,
    floor: float = 0.3,
    periods: int = 200,
    n_users: int = 1000,
    seed: int | np.random.Generator | None = None,
) -> SampledArena:
    """Draw about ``n`` battles (``n // periods`` per period; see the module docstring)."""
    r = np.asarray(ratings, dtype=float).ravel()
    mu = np.asarray(log_latency, dtype=float).ravel()
    k = len(r)
    if mu.shape != (k,) or not 0.0 < floor <= 1.0 or tau <= 0 or periods < 1:
        raise ValueError("one log latency per model, 0 < floor <= 1, tau > 0, periods >= 1")
    rng = np.random.default_rng(seed)
    iu, ju = np.triu_indices(k, 1)
    n_pairs = len(iu)
    per = n // periods
    log_lat = mu[None, :] + latency_sd * rng.standard_normal((periods, k))
    slow = np.exp(np.maximum(log_lat[:, iu], log_lat[:, ju]))  # (periods, pairs)
    z = np.exp(-(slow - slow.min(axis=1, keepdims=True)) / tau)
    pi = floor / n_pairs + (1.0 - floor) * z / z.sum(axis=1, keepdims=True)
    cdf = np.cumsum(pi, axis=1)
    period = np.repeat(np.arange(periods), per)
    u = rng.random(len(period)) * cdf[period, -1]
    pair = np.minimum((cdf[period] < u[:, None]).sum(axis=1), n_pairs - 1)
    swap = rng.random(len(pair)) < 0.5
    a = np.where(swap, ju[pair], iu[pair])
    b = np.where(swap, iu[pair], ju[pair])
    logit = LOG_ODDS_PER_POINT * (r[a] - r[b]) - latency_effect * (
        log_lat[period, a] - log_lat[period, b]
    )
    outcome = np.where(rng.random(len(pair)) < 1.0 / (1.0 + np.exp(-logit)), OUTCOME_A, OUTCOME_B)
    # the uniform-sampler target: pair scores averaged over periods, pairs equally weighted
    d_lat = log_lat[:, iu] - log_lat[:, ju]
    p_bar = (
        1.0
        / (1.0 + np.exp(-(LOG_ODDS_PER_POINT * (r[iu] - r[ju])[None, :] - latency_effect * d_lat)))
    ).mean(axis=0)
    width = max(3, len(str(k - 1)))
    return SampledArena(
        models=tuple(f"model-{i:0{width}d}" for i in range(k)),
        truth=fit_pair_scores(p_bar, np.ones(n_pairs), k),
        user=rng.integers(0, n_users, size=len(pair)).astype(np.int64),
        a=a.astype(np.int64),
        b=b.astype(np.int64),
        outcome=outcome.astype(np.int64),
        propensity=pi[period, pair],
    )
