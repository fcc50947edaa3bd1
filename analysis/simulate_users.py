"""Simulated arenas with users: heterogeneous preferences, heavy-tailed activity, known truth.

Computes per-battle arrays (user, top model, bottom model, outcome) for testing user-clustered
intervals, and the population truth they should cover:

* user u has activity A_u ~ Pareto(``pareto_shape``) (numpy's Lomax + 1; shape 1.5 means a few
  developers cast a large share of the votes, as in real arenas) and casts a multinomial share
  of the ``n`` battles proportional to A_u;
* user u's ratings are the population ratings plus their own taste, delta_u ~ N(0, sd^2) per
  model (independent of activity); 0 gives independent votes;
* pairs are drawn uniformly (or by ``pair_weights``), positions by a fair coin, and outcomes as
  in ``simulate`` (ties with ``tie_rate``, expected score = the Bradley-Terry probability, top
  slot advantage ``top_slot_p``) from the user's ratings.

The truth an estimator converges to as the number of users grows is not the mean rating: the
Bradley-Terry fit of a mixture of users is the fit of the *averaged* win probabilities
(logit non-collapsibility shrinks it a little). :func:`population_truth` computes it: the pair
score averaged over tastes, p_ij = E[sigma(c (R_i - R_j + e))] with e ~ N(0, 2 sd^2) by
Gauss-Hermite quadrature, then the Bradley-Terry fit of those scores with the pair weights
battles have (uniform pairs: all equal), on the mean-1000 scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.bt_problem import BTProblem
from analysis.bt_solve import newton
from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE, GroupedCounts, group_battles
from analysis.scale import CENTRE, LOG_ODDS_PER_POINT

__all__ = ["Arena", "UserArena", "fit_pair_scores", "population_truth", "simulate_user_arena"]


@dataclass(frozen=True)
class Arena:
    """One row per battle by a user, with the ratings the battles should recover (``truth``,
    on the mean-1000 scale); the simulations with users extend it."""

    models: tuple[str, ...]
    truth: np.ndarray
    user: np.ndarray
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray

    def _counts(self, *, with_users: bool, weight: np.ndarray | None = None) -> GroupedCounts:
        user = self.user if with_users else None
        return group_battles(
            self.a, self.b, self.outcome, models=self.models, user=user, weight=weight
        )


@dataclass(frozen=True)
class UserArena(Arena):
    """One row per battle; ``truth`` is the population truth on the mean-1000 scale."""

    def grouped(self, *, with_users: bool = True) -> GroupedCounts:
        """Counts per (user, top, bottom, outcome), or pooled over users."""
        return self._counts(with_users=with_users)


def _pairs(k: int, n: int, rng: np.random.Generator, pair_weights: np.ndarray | None) -> np.ndarray:
    n_pairs = k * (k - 1) // 2
    if pair_weights is None:
        return rng.integers(0, n_pairs, size=n)
    w = np.asarray(pair_weights, dtype=float)
    cdf = np.cumsum(w / w.sum())
    return np.minimum(np.searchsorted(cdf, rng.random(n), side="right"), n_pairs - 1)


def simulate_user_arena(
    ratings: np.ndarray,
    n: int,
    *,
    n_users: int,
    pref_sd: float = 0.0,
    pareto_shape: float = 1.5,
    tie_rate: float = 0.0,
    top_slot_p: float = 0.5,
    pair_weights: np.ndarray | None = None,
    seed: int | np.random.Generator | None = None,
) -> UserArena:
    """Draw ``n`` battles cast by ``n_users`` users (see the module docstring)."""
    r = np.asarray(ratings, dtype=float).ravel()
    k = len(r)
    if k < 2 or n_users < 1 or n < 0 or pref_sd < 0 or pareto_shape <= 0:
        raise ValueError("need two models, one user, n >= 0, pref_sd >= 0, pareto_shape > 0")
    rng = np.random.default_rng(seed)
    activity = rng.pareto(pareto_shape, n_users) + 1.0
    per_user = rng.multinomial(n, activity / activity.sum())
    user = np.repeat(np.arange(n_users), per_user)
    taste = r[None, :] + rng.normal(0.0, pref_sd, (n_users, k)) if pref_sd > 0 else r[None, :]
    iu, ju = np.triu_indices(k, 1)
    pair = _pairs(k, n, rng, pair_weights)
    swap = rng.random(n) < 0.5
    a = np.where(swap, ju[pair], iu[pair])
    b = np.where(swap, iu[pair], ju[pair])
    row = user if pref_sd > 0 else np.zeros(n, dtype=np.int64)
    gamma = np.log(top_slot_p / (1.0 - top_slot_p))
    p = 1.0 / (1.0 + np.exp(-((taste[row, a] - taste[row, b]) * LOG_ODDS_PER_POINT + gamma)))
    tau = np.minimum(tie_rate, 2.0 * np.minimum(p, 1.0 - p))
    u = rng.random(n)
    p_top = p - 0.5 * tau
    outcome = np.full(n, OUTCOME_B, dtype=np.int64)
    outcome[u < p_top] = OUTCOME_A
    outcome[(u >= p_top) & (u < p_top + tau)] = OUTCOME_TIE
    width = max(3, len(str(k - 1)))
    return UserArena(
        models=tuple(f"model-{i:0{width}d}" for i in range(k)),
        truth=population_truth(r, pref_sd=pref_sd, pair_weights=pair_weights),
        user=user.astype(np.int64),
        a=a.astype(np.int64),
        b=b.astype(np.int64),
        outcome=outcome,
    )


def population_truth(
    ratings: np.ndarray, *, pref_sd: float, pair_weights: np.ndarray | None = None
) -> np.ndarray:
    """The Bradley-Terry ratings of the taste-averaged population (mean 1000)."""
    r = np.asarray(ratings, dtype=float).ravel()
    k = len(r)
    iu, ju = np.triu_indices(k, 1)
    nodes, wts = np.polynomial.hermite_e.hermegauss(64)  # probabilists' Hermite: N(0, 1)
    wts = wts / wts.sum()
    diff = (r[iu] - r[ju])[:, None] + np.sqrt(2.0) * pref_sd * nodes[None, :]
    p_bar = (wts[None, :] / (1.0 + np.exp(-LOG_ODDS_PER_POINT * diff))).sum(axis=1)
    w = np.ones(len(iu)) if pair_weights is None else np.asarray(pair_weights, dtype=float)
    return fit_pair_scores(p_bar, w, k)


def fit_pair_scores(p_bar: np.ndarray, w: np.ndarray, k: int) -> np.ndarray:
    """Bradley-Terry ratings (mean 1000) whose pair probabilities best fit the expected scores
    ``p_bar`` of the pairs i < j (``numpy.triu_indices`` order), pair weights ``w``."""
    iu, ju = np.triu_indices(k, 1)
    # a problem over all pairs (each pair present), solved at the given scores
    counts = GroupedCounts(
        models=tuple(str(i) for i in range(k)),
        a=np.concatenate([iu, iu]),
        b=np.concatenate([ju, ju]),
        outcome=np.concatenate([np.full(len(iu), OUTCOME_A), np.full(len(iu), OUTCOME_B)]),
        count=np.ones(2 * len(iu), dtype=np.int64),
    )
    prob = BTProblem(
        counts, fitted=np.ones(k, dtype=bool), core=np.ones(k, dtype=bool), position_bias=False
    )
    n = np.zeros((prob.n_pairs, 1))
    s = np.zeros((prob.n_pairs, 1))
    pair_of = prob.pi * k + prob.pj  # pairs are (i < j) in sorted order, as iu, ju
    order = np.searchsorted(iu * k + ju, pair_of)
    n[:, 0] = w[order] * 1e6
    s[:, 0] = w[order] * 1e6 * p_bar[order]
    theta = newton(prob, np.zeros((k, 1)), n, s, gtol=1e-13, max_iter=200).theta[:, 0]
    return np.asarray(CENTRE + (theta - theta.mean()) / LOG_ODDS_PER_POINT)
