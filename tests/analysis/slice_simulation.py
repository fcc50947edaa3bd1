"""Pairwise counts simulated with known ratings, and an independent fit (test_pair_counts,
test_slice_test)."""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize
from scipy.special import log_expit

from analysis.pair_counts import PairCounts
from analysis.scale import SCALE

MODELS = tuple(f"m{i}" for i in range(8))


def simulate(
    rng: np.random.Generator,
    ratings: dict[str, np.ndarray],
    battles: int,
    *,
    tie_rate: float = 0.0,
    top_slot_p: float = 0.5,
    overdispersion: float = 0.0,
    models: tuple[str, ...] = MODELS,
) -> dict[str, PairCounts]:
    """Per value: `battles` battles on uniformly drawn pairs, Bradley-Terry outcomes.

    With ties, a battle is a tie with probability `tie_rate`, else a win with the probability
    that keeps the expected score at the Bradley-Terry value. With `top_slot_p`, each battle
    shows a random one of the two on top, which wins with the Bradley-Terry probability
    shifted by that advantage (positions are then forgotten, as in the stored matrices).
    With `overdispersion` (an intra-pair correlation, like many votes from one user), a
    pair's win probability within a value is drawn from a beta distribution around the
    Bradley-Terry value.
    """
    out = {}
    gamma = math.log(top_slot_p / (1 - top_slot_p))
    for value, r in ratings.items():
        k = len(r)
        iu = np.triu_indices(k, 1)
        n_pair = rng.multinomial(battles, np.full(len(iu[0]), 1.0 / len(iu[0])))
        p = 1.0 / (1.0 + np.exp(-(r[iu[0]] - r[iu[1]]) / SCALE))
        if gamma:
            d = (r[iu[0]] - r[iu[1]]) / SCALE
            on_top = rng.binomial(n_pair, 0.5)
            points = rng.binomial(on_top, 1 / (1 + np.exp(-(d + gamma)))) + rng.binomial(
                n_pair - on_top, 1 / (1 + np.exp(-(d - gamma)))
            )
            points = points.astype(float)
        elif overdispersion:
            size = (1 - overdispersion) / overdispersion
            points = rng.binomial(n_pair, rng.beta(p * size, (1 - p) * size)).astype(float)
        elif tie_rate:
            ties = rng.binomial(n_pair, tie_rate)
            wins = rng.binomial(n_pair - ties, np.clip((p - tie_rate / 2) / (1 - tie_rate), 0, 1))
            points = wins + 0.5 * ties
        else:
            points = rng.binomial(n_pair, p).astype(float)
        n = np.zeros((k, k))
        s = np.zeros((k, k))
        n[iu] = n_pair
        n += n.T
        s[iu] = points
        s[iu[1], iu[0]] = n_pair - points
        out[value] = PairCounts(models=models[:k], battles=n, score=s)
    return out


def scipy_max_loglik(counts: PairCounts) -> tuple[float, np.ndarray]:
    """Independent fit: BFGS on the plain log-likelihood, first strength fixed at 0."""
    n, s = counts.battles, counts.score
    k = len(counts.models)

    iu = np.triu_indices(k, 1)

    def negative(free: np.ndarray) -> float:
        # Written per unordered pair, unlike the module's ordered-pair sum.
        theta = np.concatenate([[0.0], free])
        d = theta[iu[0]] - theta[iu[1]]
        return -float(np.sum(s[iu] * log_expit(d) + (n[iu] - s[iu]) * log_expit(-d)))

    res = optimize.minimize(negative, np.zeros(k - 1), method="BFGS", options={"gtol": 1e-10})
    theta = np.concatenate([[0.0], res.x])
    return -res.fun, theta - theta.mean()
