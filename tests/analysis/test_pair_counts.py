"""Tests for analysis.pair_counts: pairwise counts and their Bradley-Terry fit.

Checked against an independent optimiser (scipy.optimize on the plain log-likelihood) and
on matrices stored the way the recompute stores them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE, group_battles
from analysis.matrices import battle_count_matrix, win_fraction_matrix
from analysis.pair_counts import PairCounts, fit_pairs
from analysis.scale import SCALE
from tests.analysis.slice_simulation import MODELS, scipy_max_loglik, simulate


def test_fit_matches_an_independent_optimiser():
    rng = np.random.default_rng(3)
    truth = rng.normal(0, 120, 6)
    counts = simulate(rng, {"all": truth}, 3000, models=MODELS[:6])["all"]
    fit = fit_pairs(counts)
    ll, theta = scipy_max_loglik(counts)
    assert fit.converged
    assert fit.loglik == pytest.approx(ll, abs=1e-6)
    np.testing.assert_allclose(fit.theta, theta, atol=1e-5)
    assert fit.n_params == 5
    np.testing.assert_allclose(fit.rating, SCALE * fit.theta)
    # The information-based standard errors are close to the spread over resamples.
    assert np.all(np.sqrt(np.diag(fit.covariance)) * SCALE > 5)


def test_counts_rebuilt_from_stored_matrices_equal_the_battles():
    # The recompute stores battle_count and win_fraction rounded to 5 decimals.
    rng = np.random.default_rng(4)
    names = ["a", "b", "c", "d"]
    top = rng.integers(0, 4, 5000)
    bottom = (top + rng.integers(1, 4, 5000)) % 4
    outcome = rng.choice([OUTCOME_A, OUTCOME_B, OUTCOME_TIE], size=5000, p=[0.5, 0.45, 0.05])
    grouped = group_battles(top, bottom, outcome, models=names)
    n = battle_count_matrix(grouped).tolist()
    w = [[None if math.isnan(v) else round(float(v), 5) for v in row] for row in
         win_fraction_matrix(grouped)]  # fmt: skip
    counts = PairCounts.from_matrices(names, n, w)
    points = np.where(outcome == OUTCOME_A, 1.0, np.where(outcome == OUTCOME_TIE, 0.5, 0.0))
    direct = PairCounts.from_battles(names, top, bottom, points)
    np.testing.assert_array_equal(counts.battles, direct.battles)
    np.testing.assert_allclose(counts.score, direct.score, atol=0.01)
    assert counts.total == 5000


def test_pair_counts_reject_inconsistent_input():
    with pytest.raises(ValueError, match="unique"):
        PairCounts(("a", "a"), np.zeros((2, 2)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="score <= battles"):
        PairCounts(("a", "b"), np.array([[0, 1], [1, 0]]), np.array([[0, 2], [0, 0]]))
    with pytest.raises(ValueError, match="symmetric"):
        PairCounts(("a", "b"), np.array([[0, 1], [2, 0]]), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="itself"):
        PairCounts.from_battles(("a", "b"), [0], [0], [1.0])
