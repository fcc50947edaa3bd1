"""Tests for analysis.latency: fits, pair latency, floored pair distribution, tau choice."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from analysis.latency import (
    DEFAULT_PRIOR,
    LogNormalFit,
    LogNormalPrior,
    choose_tau,
    experienced_latency_mean,
    experienced_latency_quantiles,
    fit_lognormal,
    fit_models,
    model_shares,
    pair_distribution,
    pair_latency_matrix,
    pair_latency_quantile,
    pooled_prior,
    sample_pair,
)


def ten_models() -> list[LogNormalFit]:
    """Medians 0.3-3 s (log-spaced), spreads 0.3-0.6, as in the benchmark."""
    medians = np.geomspace(0.3, 3.0, 10)
    sigmas = np.linspace(0.3, 0.6, 10)
    return [LogNormalFit(math.log(m), float(s)) for m, s in zip(medians, sigmas, strict=True)]


def upper(probs: np.ndarray) -> np.ndarray:
    return probs[np.triu_indices(probs.shape[0], 1)]


# ------------------------------------------------------------------------- fitting


@pytest.mark.parametrize(("mu", "sigma"), [(-1.2, 0.3), (0.0, 0.5), (1.1, 0.9)])
def test_fit_recovers_simulated_lognormal(mu: float, sigma: float) -> None:
    rng = np.random.default_rng(7)
    n = 4000
    fit = fit_lognormal(rng.lognormal(mu, sigma, n))
    assert fit.n == n
    assert abs(fit.mu - mu) < 4 * sigma / math.sqrt(n)
    assert abs(fit.sigma - sigma) < 4 * sigma / math.sqrt(2 * n)
    assert fit.median == pytest.approx(math.exp(mu), rel=0.05)


def test_fit_drops_failed_latencies() -> None:
    fit = fit_lognormal([1.0, 2.0, 4.0, 0.0, -1.0, math.nan, math.inf])
    assert fit.n == 3
    assert fit.mu == pytest.approx(math.log(2.0))


def test_fit_without_prior_needs_two_values() -> None:
    with pytest.raises(ValueError):
        fit_lognormal([1.0])
    with pytest.raises(ValueError):
        fit_lognormal([])


def test_prior_shrinkage() -> None:
    prior = LogNormalPrior(mu=0.0, sigma=0.5, weight=5.0)
    assert fit_lognormal([], prior=prior) == LogNormalFit(0.0, 0.5, 0)
    # Five observations at ln L = 2 weigh as much as the prior: mu halfway.
    few = fit_lognormal([math.e**2] * 5, prior=prior)
    assert few.mu == pytest.approx(1.0)
    # sigma^2 = (5*0.25 + 0 + 5*5/10 * 4) / 10
    assert few.sigma == pytest.approx(math.sqrt((1.25 + 10.0) / 10))
    rng = np.random.default_rng(3)
    many = fit_lognormal(rng.lognormal(2.0, 0.4, 20000), prior=prior)
    assert many.mu == pytest.approx(2.0, abs=0.02)
    assert many.sigma == pytest.approx(0.4, abs=0.02)


def test_pooled_prior_from_models() -> None:
    rng = np.random.default_rng(11)
    data = {
        "fast": rng.lognormal(-1.0, 0.3, 3000),
        "slow": rng.lognormal(1.0, 0.5, 3000),
        "one": [5.0],  # too few to contribute
    }
    prior = pooled_prior(data, weight=3.0)
    assert prior.weight == 3.0
    assert prior.mu == pytest.approx(0.0, abs=0.03)
    assert prior.sigma == pytest.approx(math.sqrt((0.3**2 + 0.5**2) / 2), abs=0.02)
    assert pooled_prior({"a": [], "b": [1.0]}) == LogNormalPrior(
        DEFAULT_PRIOR.mu, DEFAULT_PRIOR.sigma, 5.0
    )


def test_prior_makes_zero_sample_model_samplable() -> None:
    rng = np.random.default_rng(5)
    data = {f"m{i}": rng.lognormal(math.log(0.5 + i), 0.4, 500) for i in range(4)}
    data["new"] = []
    fits = fit_models(data)
    assert fits["new"].n == 0 and math.isfinite(fits["new"].mu) and fits["new"].sigma > 0
    names = list(fits)
    lat = pair_latency_matrix([fits[n] for n in names])
    assert np.all(np.isfinite(lat.expected)) and np.all(np.isfinite(lat.median))
    probs = pair_distribution(lat.expected, tau=0.05, floor=0.2)
    new = names.index("new")
    assert model_shares(probs)[new] > 0
    draws = [sample_pair(probs, rng) for _ in range(20000)]
    hits = sum(new in d for d in draws)
    expected = model_shares(probs)[new] * len(draws)
    assert hits > 0 and abs(hits - expected) < 5 * math.sqrt(expected)


def test_unfitted_model_without_prior_has_no_pair_latency() -> None:
    with pytest.raises(ValueError):
        pair_latency_matrix([LogNormalFit(0.0, 0.5), LogNormalFit(math.nan, 0.5)])
    with pytest.raises(ValueError):
        pair_latency_matrix([LogNormalFit(0.0, 0.5)])


# ------------------------------------------------------------------ pair latency


def test_expected_max_matches_quad_and_quadrature() -> None:
    fits = ten_models()
    closed = pair_latency_matrix(fits).expected
    quad_grid = pair_latency_matrix(fits, method="quadrature").expected
    assert np.allclose(closed, quad_grid, rtol=1e-9)
    for i, j in [(0, 1), (0, 9), (4, 7)]:
        fi, fj = fits[i], fits[j]
        ref, _ = integrate.quad(lambda x, a=fi, b=fj: 1 - a.cdf(x) * b.cdf(x), 0, np.inf)
        assert closed[i, j] == pytest.approx(ref, rel=1e-7)
        assert closed[j, i] == closed[i, j]


def test_expected_and_median_max_match_monte_carlo() -> None:
    rng = np.random.default_rng(2024)
    fits = [LogNormalFit(-1.0, 0.3), LogNormalFit(0.2, 0.8), LogNormalFit(0.0, 0.5)]
    lat = pair_latency_matrix(fits)
    p90 = pair_latency_quantile(fits, 0.9)
    n = 400_000
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        m = np.maximum(fits[i].sample(rng, n), fits[j].sample(rng, n))
        se = m.std() / math.sqrt(n)
        assert abs(lat.expected[i, j] - m.mean()) < 4 * se
        assert lat.median[i, j] == pytest.approx(np.median(m), rel=0.01)
        assert p90[i, j] == pytest.approx(np.quantile(m, 0.9), rel=0.01)


def test_median_solves_product_of_cdfs() -> None:
    fits = ten_models()
    med = pair_latency_matrix(fits).median
    for i in range(10):
        for j in range(i + 1, 10):
            assert fits[i].cdf(med[i, j]) * fits[j].cdf(med[i, j]) == pytest.approx(0.5, abs=1e-12)
            assert med[i, j] >= max(fits[i].median, fits[j].median)


def test_pair_latency_for_many_models() -> None:
    # Its speed (~2 ms for 50 models) is measured in benchmarks/bench_hot_functions.py.
    fits = [LogNormalFit(float(m), 0.5) for m in np.linspace(-1, 1, 50)]
    lat = pair_latency_matrix(fits)
    dist = pair_distribution(lat.expected, tau=0.5, floor=0.2)
    assert lat.expected.shape == (50, 50)
    assert np.all(np.isfinite(lat.expected[~np.eye(50, dtype=bool)]))
    assert dist.sum() == pytest.approx(1.0) and np.all(dist >= 0)


# --------------------------------------------------------------- pair distribution


@pytest.mark.parametrize("floor", [0.0, 0.2, 0.5, 1.0])
@pytest.mark.parametrize("tau", [0.0, 1e-4, 0.05, 0.5, 5.0, math.inf])
def test_floor_holds_for_every_pair(tau: float, floor: float) -> None:
    cost = pair_latency_matrix(ten_models()).expected
    probs = pair_distribution(cost, tau=tau, floor=floor)
    p = upper(probs)
    assert p.sum() == pytest.approx(1.0)
    assert np.all(probs[np.tril_indices(10)] == 0)
    assert p.min() >= floor / p.size * (1 - 1e-12)


def test_infinite_tau_is_uniform_and_large_tau_approaches_it() -> None:
    cost = pair_latency_matrix(ten_models()).expected
    assert np.allclose(upper(pair_distribution(cost, tau=math.inf, floor=0.0)), 1 / 45)
    assert np.allclose(upper(pair_distribution(cost, tau=1e6, floor=0.0)), 1 / 45, rtol=1e-4)
    assert np.allclose(upper(pair_distribution(cost, tau=0.1, floor=1.0)), 1 / 45)


def test_zero_tau_is_fastest_pair_plus_floor() -> None:
    fits = ten_models()
    cost = pair_latency_matrix(fits).expected
    probs = pair_distribution(cost, tau=0.0, floor=0.2)
    assert probs[0, 1] == pytest.approx(0.8 + 0.2 / 45)
    others = upper(probs)[1:]
    assert np.allclose(others, 0.2 / 45)
    # A tiny tau is the same limit, computed without overflow.
    assert np.allclose(pair_distribution(cost, tau=1e-9, floor=0.2), probs)


def test_ties_split_and_cheaper_pairs_weigh_more() -> None:
    cost = np.array([[0, 1, 1, 3], [1, 0, 2, 3], [1, 2, 0, 3], [3, 3, 3, 0]], dtype=float)
    probs = pair_distribution(cost, tau=0.0, floor=0.0)
    assert probs[0, 1] == probs[0, 2] == pytest.approx(0.5)
    probs = pair_distribution(cost, tau=1.0, floor=0.1)
    assert probs[0, 1] > probs[1, 2] > probs[0, 3]


def test_active_models_restrict_pairs() -> None:
    cost = pair_latency_matrix(ten_models()).expected
    active = np.array([True, False] * 5)
    probs = pair_distribution(cost, tau=0.5, floor=0.3, active=active)
    assert probs.sum() == pytest.approx(1.0)
    assert np.all(probs[~active, :] == 0) and np.all(probs[:, ~active] == 0)
    live = probs[np.ix_(active, active)][np.triu_indices(5, 1)]
    assert live.min() >= 0.3 / 10 * (1 - 1e-12)
    with pytest.raises(ValueError):
        pair_distribution(cost, tau=0.5, floor=0.3, active=[True] + [False] * 9)


def test_invalid_arguments() -> None:
    cost = pair_latency_matrix(ten_models()).expected
    with pytest.raises(ValueError):
        pair_distribution(cost, tau=-1.0, floor=0.2)
    with pytest.raises(ValueError):
        pair_distribution(cost, tau=1.0, floor=1.2)
    with pytest.raises(ValueError):
        pair_distribution(cost[:3], tau=1.0, floor=0.2)


# ------------------------------------------------------------------ sampling


def test_sample_pair_frequencies_and_position() -> None:
    rng = np.random.default_rng(99)
    cost = pair_latency_matrix(ten_models()).expected
    probs = pair_distribution(cost, tau=0.3, floor=0.2)
    n = 60000
    counts = np.zeros((10, 10))
    top_is_lower_index = 0
    for _ in range(n):
        a, b = sample_pair(probs, rng)
        assert a != b
        counts[min(a, b), max(a, b)] += 1
        top_is_lower_index += a < b
    expected = upper(probs) * n
    chi2 = float((((upper(counts) - expected) ** 2) / expected).sum())
    assert chi2 < 44 + 5 * math.sqrt(2 * 44)  # 44 degrees of freedom
    assert abs(top_is_lower_index / n - 0.5) < 0.01
    a, b = sample_pair(probs, rng, randomize_order=False)
    assert a < b


def test_model_shares_sum_to_two() -> None:
    probs = pair_distribution(pair_latency_matrix(ten_models()).expected, tau=0.2, floor=0.2)
    shares = model_shares(probs)
    assert shares.sum() == pytest.approx(2.0)
    assert shares[0] > shares[-1]


# ------------------------------------------------------------ experienced latency


def test_experienced_quantiles_match_simulation() -> None:
    rng = np.random.default_rng(1)
    fits = ten_models()
    lat = pair_latency_matrix(fits)
    for tau in (math.inf, 0.3):
        probs = pair_distribution(lat.expected, tau=tau, floor=0.2)
        q50, q90 = experienced_latency_quantiles(fits, probs, [0.5, 0.9])
        n = 200_000
        ii, jj = np.triu_indices(10, 1)
        w = upper(probs)
        k = rng.choice(w.size, size=n, p=w / w.sum())
        mu = np.array([f.mu for f in fits])
        sg = np.array([f.sigma for f in fits])
        li = rng.lognormal(mu[ii[k]], sg[ii[k]])
        lj = rng.lognormal(mu[jj[k]], sg[jj[k]])
        wait = np.maximum(li, lj)
        assert q50 == pytest.approx(np.median(wait), rel=0.01)
        assert q90 == pytest.approx(np.quantile(wait, 0.9), rel=0.015)
        assert experienced_latency_mean(lat.expected, probs) == pytest.approx(wait.mean(), rel=0.01)


def test_latency_aware_sampling_cuts_median_wait() -> None:
    fits = ten_models()
    lat = pair_latency_matrix(fits)
    uniform = pair_distribution(lat.expected, tau=math.inf, floor=0.2)
    fast = pair_distribution(lat.expected, tau=0.2, floor=0.2)
    (u50,) = experienced_latency_quantiles(fits, uniform, 0.5)
    (f50,) = experienced_latency_quantiles(fits, fast, 0.5)
    assert f50 < 0.67 * u50


def test_quantiles_reject_bad_levels() -> None:
    fits = ten_models()
    probs = pair_distribution(pair_latency_matrix(fits).expected, tau=1.0, floor=0.2)
    with pytest.raises(ValueError):
        experienced_latency_quantiles(fits, probs, [0.0])


# ------------------------------------------------------------------ choose_tau


def test_choose_tau_meets_target_with_largest_tau() -> None:
    fits = ten_models()
    choice = choose_tau(fits, floor=0.2, target_median_reduction=0.33)
    assert choice.reached
    assert choice.median_reduction >= 0.33 - 1e-9
    assert choice.median_reduction < 0.34  # bisection lands on the boundary
    assert choice.chosen.min_pair_share >= 0.2 - 1e-12
    # A visibly larger tau (closer to uniform) misses the target.
    lat = pair_latency_matrix(fits)
    looser = pair_distribution(lat.expected, tau=choice.chosen.tau * 1.2, floor=0.2)
    (med,) = experienced_latency_quantiles(fits, looser, 0.5)
    assert med > 0.67 * choice.uniform.median
    # The curve spans uniform-like to greedy and is sorted by tau.
    taus = [p.tau for p in choice.curve]
    assert taus == sorted(taus)
    assert choice.curve[-1].median == pytest.approx(choice.uniform.median, rel=0.01)
    assert choice.curve[0].median < choice.chosen.median


def test_choose_tau_absolute_target_and_unreachable() -> None:
    fits = ten_models()
    choice = choose_tau(fits, floor=0.2, target_median=1.2)
    assert choice.reached and choice.chosen.median <= 1.2
    # Even the greedy pair cannot beat the fastest pair's own median wait.
    impossible = choose_tau(fits, floor=0.2, target_median=0.01)
    assert not impossible.reached
    assert impossible.chosen.median == min(p.median for p in impossible.curve)
    # With a full floor the distribution is uniform whatever tau is.
    flat = choose_tau(fits, floor=1.0, target_median_reduction=0.1)
    assert not flat.reached
    with pytest.raises(ValueError):
        choose_tau(fits, floor=0.2, target_median=1.0, target_median_reduction=0.3)


def test_choose_tau_with_median_cost() -> None:
    choice = choose_tau(ten_models(), floor=0.2, target_median_reduction=0.33, cost="median")
    assert choice.reached and choice.median_reduction >= 0.33 - 1e-9
