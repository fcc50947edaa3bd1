"""Simulated battles with covariates of known effect, for the controlled (contextual) fit.

Computes battles between models that differ in how long and how fast their completions
typically are: completion length L = exp(m_i + 0.6 z) characters and latency
T = exp(l_i + 0.4 z) seconds per battle, context length exp(N(7.5, 1)) characters; the
covariates are ``contextual_data.style_features`` (with context interactions), and the top
completion wins with sigma(c (R_top - R_bottom) + x . beta) for the given ``coef`` (log-odds
per covariate; absent names are 0). Positions are fair coins, users uniform among
``n_users``. Because a model's typical length and speed enter its win rate, an uncontrolled
fit mixes them into its rating; the controlled fit should recover ``ratings`` (mean 1000) and
``coef`` within their intervals.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from analysis.contextual_data import ContextCounts, group_contextual, style_features
from analysis.grouping import OUTCOME_A, OUTCOME_B, GroupedCounts, group_battles
from analysis.scale import CENTRE, LOG_ODDS_PER_POINT

__all__ = ["ContextArena", "simulate_contextual"]


@dataclass(frozen=True)
class ContextArena:
    models: tuple[str, ...]
    truth: np.ndarray  # mean-1000 ratings
    coef: np.ndarray  # true coefficient per feature name
    feature_names: tuple[str, ...]
    user: np.ndarray
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    features: np.ndarray  # (battles, F), exact values

    def counts(
        self, names: tuple[str, ...] | None = None, *, with_users: bool = True, bins: int = 3
    ) -> ContextCounts:
        """Cells with moments of the named features (default all), per user or pooled."""
        names = self.feature_names if names is None else names
        cols = [self.feature_names.index(n) for n in names]
        return group_contextual(
            self.a, self.b, self.outcome, self.features[:, cols],
            models=self.models, feature_names=names, user=self.user if with_users else None,
            bins=bins,
        )  # fmt: skip

    def grouped(self) -> GroupedCounts:
        """The battles without covariates (the uncontrolled board's input)."""
        return group_battles(self.a, self.b, self.outcome, models=self.models, user=self.user)


def simulate_contextual(
    ratings: np.ndarray,
    n: int,
    *,
    coef: Mapping[str, float],
    log_length: np.ndarray | None = None,
    log_latency: np.ndarray | None = None,
    n_users: int = 500,
    seed: int | np.random.Generator | None = None,
) -> ContextArena:
    """Draw ``n`` battles (see the module docstring)."""
    r = np.asarray(ratings, dtype=float).ravel()
    k = len(r)
    rng = np.random.default_rng(seed)
    m = rng.normal(5.0, 0.5, k) if log_length is None else np.asarray(log_length, dtype=float)
    lat = rng.normal(0.0, 0.4, k) if log_latency is None else np.asarray(log_latency, dtype=float)
    iu, ju = np.triu_indices(k, 1)
    pair = rng.integers(0, len(iu), size=n)
    swap = rng.random(n) < 0.5
    a = np.where(swap, ju[pair], iu[pair])
    b = np.where(swap, iu[pair], ju[pair])
    x, names = style_features(
        length_top=np.exp(m[a] + 0.6 * rng.standard_normal(n)),
        length_bottom=np.exp(m[b] + 0.6 * rng.standard_normal(n)),
        latency_top=np.exp(lat[a] + 0.4 * rng.standard_normal(n)),
        latency_bottom=np.exp(lat[b] + 0.4 * rng.standard_normal(n)),
        context_length=np.exp(rng.normal(7.5, 1.0, n)),
        interactions=True,
    )
    unknown = set(coef) - set(names)
    if unknown:
        raise ValueError(f"unknown features {sorted(unknown)}")
    beta = np.array([float(coef.get(name, 0.0)) for name in names])
    p = 1.0 / (1.0 + np.exp(-(LOG_ODDS_PER_POINT * (r[a] - r[b]) + x @ beta)))
    outcome = np.where(rng.random(n) < p, OUTCOME_A, OUTCOME_B).astype(np.int64)
    width = max(3, len(str(k - 1)))
    return ContextArena(
        models=tuple(f"model-{i:0{width}d}" for i in range(k)),
        truth=r - r.mean() + CENTRE,
        coef=beta,
        feature_names=names,
        user=rng.integers(0, n_users, size=n).astype(np.int64),
        a=a.astype(np.int64),
        b=b.astype(np.int64),
        outcome=outcome,
        features=x,
    )
