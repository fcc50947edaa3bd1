"""Weighted fits (analysis.weights): against an independent weighted logistic regression, the
inverse pair-count reweighting of arena-rank, and inverse-propensity weighting against a
latency-aware sampler with known truth."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from analysis.bradley_terry import fit_bt
from analysis.grouping import OUTCOME_A, OUTCOME_B, GroupedCounts
from analysis.intervals import bootstrap, sandwich
from analysis.scale import SCALE
from analysis.simulate import simulate_battles
from analysis.simulate_sampler import simulate_latency_sampler
from analysis.weights import (
    effective_sample_size,
    inverse_pair_count_weights,
    inverse_propensity_weights,
    pair_propensity_weights,
)

TRUE = np.linspace(900.0, 1100.0, 6)


@pytest.fixture(scope="module")
def uneven():
    k = len(TRUE)
    w = np.random.default_rng(0).gamma(0.5, size=k * (k - 1) // 2) + 0.02
    return simulate_battles(TRUE, 20_000, tie_rate=0.1, pair_weights=w, seed=2).grouped()


def _weighted_logistic(g: GroupedCounts, weight: np.ndarray) -> np.ndarray:
    """Independent weighted fit: scipy L-BFGS on the rows, ties as half wins, mean 1000."""
    y = np.select([g.outcome == OUTCOME_A, g.outcome == OUTCOME_B], [1.0, 0.0], 0.5)
    k = g.n_models

    def nll(theta):
        z = theta[g.a] - theta[g.b]
        loss = -(weight * (y * log_expit(z) + (1 - y) * log_expit(-z))).sum()
        r = weight * (y - expit(z))
        grad = -np.bincount(g.a, weights=r, minlength=k) + np.bincount(g.b, weights=r, minlength=k)
        return loss, grad

    res = minimize(nll, np.zeros(k), jac=True, method="L-BFGS-B", options={"gtol": 1e-12})
    return 1000.0 + SCALE * (res.x - res.x.mean())


def test_inverse_pair_count_weights_match_an_independent_weighted_fit(uneven):
    weighted = inverse_pair_count_weights(uneven, min_pair_count=50)
    fit = fit_bt(weighted)
    assert fit.converged
    assert np.max(np.abs(fit.rating - _weighted_logistic(uneven, weighted.weight))) < 0.01
    # every pair above the floor carries the same total weight
    k = uneven.n_models
    key = np.minimum(uneven.a, uneven.b) * k + np.maximum(uneven.a, uneven.b)
    per_pair = np.bincount(key, weights=weighted.weight)[np.unique(key)]
    n_pair = np.bincount(key, weights=uneven.count)[np.unique(key)]
    assert np.allclose(per_pair[n_pair >= 50], 1.0)
    # and the result moves away from the plain fit on uneven data
    assert np.max(np.abs(fit.rating - fit_bt(uneven).rating)) > 0.5


def test_integer_weights_are_repeated_battles(uneven):
    times = np.random.default_rng(1).integers(1, 4, size=len(uneven.count))
    repeated = GroupedCounts(
        models=uneven.models,
        a=uneven.a,
        b=uneven.b,
        outcome=uneven.outcome,
        count=uneven.count * times,
    )
    weighted = uneven.with_weight(uneven.count * times)
    assert np.allclose(fit_bt(weighted).rating, fit_bt(repeated).rating, atol=1e-9)
    # the weights' scale does not matter
    assert np.allclose(
        fit_bt(uneven.with_weight(7.5 * weighted.weight)).rating, fit_bt(weighted).rating, atol=1e-9
    )


def test_uniform_propensities_change_nothing(uneven):
    k = uneven.n_models
    uniform = np.full((k, k), 1.0 / (k * (k - 1) / 2))
    g = pair_propensity_weights(uneven, uniform)
    assert np.allclose(g.weight, uneven.count)
    assert np.allclose(fit_bt(g).rating, fit_bt(uneven).rating, atol=1e-9)
    assert np.allclose(sandwich(fit_bt(g)).sd, sandwich(fit_bt(uneven)).sd, rtol=1e-9)
    assert np.allclose(inverse_propensity_weights(np.array([0.5, 0.1]), n_models=2), [2.0, 10.0])
    assert inverse_propensity_weights(np.array([1e-6]), n_models=3, max_weight=50.0)[0] == 50.0
    assert effective_sample_size(np.array([1.0, 1.0, 2.0])) == pytest.approx(16 / 6)
    with pytest.raises(ValueError):
        inverse_propensity_weights(np.array([0.0]), n_models=3)


def test_weighted_bootstrap_and_sandwich_agree_for_pair_level_weights(uneven):
    fit = fit_bt(inverse_pair_count_weights(uneven))
    s, b = sandwich(fit), bootstrap(fit, rounds=600, seed=0)
    assert np.allclose(b.sd / s.sd, 1.0, atol=0.12)


LAT = np.log(np.array([1.0, 2.5, 0.4, 1.5, 0.6, 2.0]))


def test_inverse_propensity_weights_recover_the_uniform_sampler_truth():
    errors = {"plain": [], "ipw": []}
    covered = {"plain": 0, "ipw": 0}
    for seed in range(12):
        arena = simulate_latency_sampler(
            TRUE, 30_000, log_latency=LAT, latency_sd=0.6, latency_effect=0.7, tau=0.5, seed=seed
        )
        for name, g in (("plain", arena.grouped()), ("ipw", arena.grouped(ipw=True))):
            fit = fit_bt(g)
            iv = sandwich(fit, clustered=True)
            errors[name].append(fit.rating - arena.truth)
            covered[name] += int(np.sum((iv.lower <= arena.truth) & (arena.truth <= iv.upper)))
    rmse = {k: float(np.sqrt(np.mean(np.square(v)))) for k, v in errors.items()}
    assert rmse["ipw"] < 0.5 * rmse["plain"], rmse
    assert covered["ipw"] / (12 * len(TRUE)) > 0.88, covered
    assert covered["plain"] / (12 * len(TRUE)) < 0.6, covered
