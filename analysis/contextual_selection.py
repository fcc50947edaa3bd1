"""Which covariates earn their place in the controlled fit: held-out likelihood.

Computes, for candidate covariate sets of a :class:`~analysis.contextual_data.ContextCounts`,
the mean log-likelihood per held-out battle: each cell's battles are split into ``folds`` at
random (one multinomial draw per cell, the same split for every candidate), the controlled fit
(``contextual.fit_contextual``) is refitted without each fold, and the held-out battles are
scored with the same second-order cell expansion as the fit. A context interaction (or any
covariate) is kept only if it raises this score (``select_features``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import expit, log_expit

from analysis.contextual import fit_contextual
from analysis.contextual_data import ContextCounts
from analysis.grouping import OUTCOME_A, OUTCOME_B

__all__ = ["cross_validated_loglik", "select_features"]


def cross_validated_loglik(
    cc: ContextCounts,
    feature_sets: Sequence[Sequence[str]],
    *,
    folds: int = 5,
    seed: int = 0,
    ridge: float = 1.0,
) -> dict[tuple[str, ...], float]:
    """Mean held-out log-likelihood per battle for each feature set (same folds for all)."""
    if folds < 2:
        raise ValueError("folds must be at least 2")
    split = np.random.default_rng(seed).multinomial(cc.count, np.full(folds, 1.0 / folds))
    out: dict[tuple[str, ...], float] = {}
    for names in feature_sets:
        sub = cc.select(names)
        y = np.select([sub.outcome == OUTCOME_A, sub.outcome == OUTCOME_B], [1.0, 0.0], 0.5)
        total, ll = 0.0, 0.0
        for fold in range(folds):
            train = sub.with_counts(sub.count - split[:, fold])
            fit = fit_contextual(train, ridge=ridge, clustered=False)
            n_test = split[:, fold].astype(float)
            ok = np.isfinite(fit.theta[sub.a]) & np.isfinite(fit.theta[sub.b]) & (n_test > 0)
            mu = fit.theta[sub.a[ok]] - fit.theta[sub.b[ok]] + sub.features[ok] @ fit.coef
            q = expit(mu) * expit(-mu)
            if sub.scatter is None:
                raise RuntimeError("contextual data has its scatter once constructed")
            s_test = sub.scatter[ok] * (n_test[ok] / sub.count[ok])[:, None, None]
            quad = np.einsum("f,rfg,g->r", fit.coef, s_test, fit.coef)
            cell = n_test[ok] * (y[ok] * log_expit(mu) + (1 - y[ok]) * log_expit(-mu))
            ll += float((cell - 0.5 * q * quad).sum())
            total += float(n_test[ok].sum())
        out[tuple(names)] = ll / max(total, 1.0)
    return out


def select_features(
    cc: ContextCounts,
    candidates: Sequence[Sequence[str]],
    *,
    folds: int = 5,
    seed: int = 0,
    ridge: float = 1.0,
) -> tuple[tuple[str, ...], dict[tuple[str, ...], float]]:
    """The candidate feature set with the best held-out likelihood, and all the scores."""
    scores = cross_validated_loglik(cc, candidates, folds=folds, seed=seed, ridge=ridge)
    return max(scores, key=lambda s: scores[s]), scores
