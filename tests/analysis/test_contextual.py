"""Controlled ratings (analysis.contextual): the cell-moment fit against a per-battle logistic
regression, recovery of known covariate effects within their intervals, ridge, and feature
selection by held-out likelihood."""

import json

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from analysis.bradley_terry import fit_bt
from analysis.contextual import fit_contextual
from analysis.contextual_data import ContextCounts, group_contextual, style_features
from analysis.contextual_selection import cross_validated_loglik, select_features
from analysis.scale import SCALE
from analysis.simulate_context import simulate_contextual

R = np.linspace(900.0, 1100.0, 8)
COEF = {"top": 1.2, "length": 0.8, "latency": -0.6, "slow_top": 0.3}
BASE = ("top", "length", "latency", "slow_top")


@pytest.fixture(scope="module")
def arena():
    return simulate_contextual(R, 200_000, coef=COEF, seed=1)


def _per_battle_fit(arena, names):
    """Independent fit: one row per battle, scipy L-BFGS, ridge 1 on the coefficients."""
    x = arena.features[:, [arena.feature_names.index(n) for n in names]]
    y = (arena.outcome == 0).astype(float)
    k = len(arena.models)

    def nll(p):
        th, b = p[:k], p[k:]
        z = th[arena.a] - th[arena.b] + x @ b
        r = y - expit(z)
        g = np.r_[np.bincount(arena.a, r, k) - np.bincount(arena.b, r, k), x.T @ r - b]
        return -(y * log_expit(z) + (1 - y) * log_expit(-z)).sum() + 0.5 * b @ b, -g

    opts = {"gtol": 1e-10, "maxiter": 5000}
    res = minimize(nll, np.zeros(k + len(names)), jac=True, method="L-BFGS-B", options=opts)
    th = res.x[:k]
    return 1000.0 + SCALE * (th - th.mean()), res.x[k:]


def test_cell_moments_match_a_per_battle_fit(arena):
    rating, coef = _per_battle_fit(arena, BASE)
    cc = arena.counts(BASE, with_users=False)  # 3 bins per covariate, moments within
    assert len(cc.count) < 0.02 * cc.total
    fit = fit_contextual(cc)
    assert fit.converged and not fit.clustered
    assert np.max(np.abs((fit.coef - coef) / fit.coef_se)) < 0.05
    assert np.max(np.abs(fit.rating - rating)) < 0.05
    # without bins, one cell per (pair, outcome): cheaper, and the expansion error shows
    coarse = fit_contextual(arena.counts(BASE, with_users=False, bins=1))
    assert np.max(np.abs((coarse.coef - coef) / coarse.coef_se)) > 0.3


def test_merging_cells_combines_moments_exactly():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 2))
    a, b, o = np.zeros(40, int), np.ones(40, int), np.zeros(40, int)
    one = group_contextual(a, b, o, x, models=("p", "q"), feature_names=("u", "v"), bins=1)
    halves = [group_contextual(a[s], b[s], o[s], x[s], models=("p", "q"), feature_names=("u", "v"), bins=1)
              for s in (slice(0, 15), slice(15, 40))]  # fmt: skip
    merged = ContextCounts(
        models=("p", "q"), feature_names=("u", "v"),
        a=[0, 0], b=[1, 1], outcome=[0, 0], count=[15, 25],
        features=np.vstack([h.features for h in halves]),
        scatter=np.concatenate([h.scatter for h in halves]),
    )  # fmt: skip
    assert merged.count.tolist() == [40] == one.count.tolist()
    assert np.allclose(merged.features, x.mean(axis=0)) and np.allclose(
        one.features, merged.features
    )
    assert np.allclose(merged.scatter[0], (x - x.mean(0)).T @ (x - x.mean(0)))


@pytest.mark.slow
def test_known_effects_are_recovered_within_their_intervals():
    hits = np.zeros(len(BASE))
    rating_hits, total = 0, 0
    sims = 30
    for seed in range(sims):
        sim = simulate_contextual(R, 20_000, coef=COEF, n_users=300, seed=100 + seed)
        fit = fit_contextual(sim.counts(BASE))
        assert fit.clustered and fit.clusters == 300
        true = np.array([COEF[n] for n in BASE])
        hits += (fit.coef_lower <= true) & (true <= fit.coef_upper)
        rating_hits += int(np.sum((fit.lower <= sim.truth) & (sim.truth <= fit.upper)))
        total += len(R)
    assert np.all(hits / sims >= 0.83), hits / sims
    assert rating_hits / total >= 0.9


def test_uncontrolled_ratings_absorb_length_and_speed(arena):
    fit = fit_contextual(arena.counts(BASE, with_users=False))
    plain = fit_bt(arena.grouped(), position_bias=True)
    controlled_err = np.max(np.abs(fit.rating - arena.truth))
    assert controlled_err < 5.0 < np.max(np.abs(plain.rating - arena.truth))
    c = {d["feature"]: d for d in fit.coefficients()}
    assert abs(c["length"]["points"] - SCALE * c["length"]["log_odds"]) < 1e-9
    d = json.loads(json.dumps(fit.to_dict(), allow_nan=False))
    assert d["rank"][int(np.argmax(fit.rating))] == 1 and len(d["coefficients"]) == len(BASE)


def test_ridge_shrinks_the_coefficients(arena):
    cc = arena.counts(("top", "length"), with_users=False)
    light = fit_contextual(cc, ridge=0.0)
    heavy = fit_contextual(cc, ridge=1e7)
    assert np.all(np.abs(heavy.coef) < 0.1 * np.abs(light.coef))
    with pytest.raises(ValueError):
        fit_contextual(cc, ridge=-1.0)
    with pytest.raises(ValueError):
        fit_contextual(cc, clustered=True)  # no users in pooled counts


def test_held_out_likelihood_picks_a_real_context_interaction():
    with_ctx = simulate_contextual(R, 60_000, coef={**COEF, "length_ctx": 0.6}, seed=7)
    sets = [BASE, (*BASE, "length_ctx")]
    best, scores = select_features(with_ctx.counts(with_users=False), sets)
    assert best == (*BASE, "length_ctx") and scores[best] > scores[BASE]
    without = simulate_contextual(R, 60_000, coef=COEF, seed=8)
    scores0 = cross_validated_loglik(without.counts(with_users=False), sets)
    # no real interaction: the extra term gains (almost) nothing out of sample
    assert scores0[(*BASE, "length_ctx")] - scores0[BASE] < 2e-5


def test_style_features():
    x, names = style_features(
        length_top=np.array([10.0, 0.0, 30.0]),
        length_bottom=np.array([30.0, 0.0, 10.0]),
        latency_top=np.array([1.0, 2.0, 1.0]),
        latency_bottom=np.array([1.0, 1.0, 3.0]),
        context_length=np.array([100.0, 1000.0, 10.0]),
        interactions=True,
    )
    assert names[:4] == BASE and "length_ctx" in names
    assert x[:, 0].tolist() == [1.0, 1.0, 1.0]
    assert np.allclose(x[:, 1], [-0.5, 0.0, 0.5]) and np.allclose(x[:, 2], [0.0, 1 / 3, -0.5])
