"""The information term of the pair sampler, its mix with latency, and the simulated arena."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chi2

from analysis.active_sampling import fit_pair_ratings, pair_information, pair_tables
from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE, GroupedCounts
from analysis.latency import model_shares, pair_distribution, sample_pair
from analysis.simulate_active import ActiveWorld, Sampler, run_arena


def laplacian(w: np.ndarray) -> np.ndarray:
    return np.diag(w.sum(axis=1)) - w


def test_two_models_by_hand():
    """n = 10 votes + 1 pseudo-vote at even odds: Var(R1) = 1/11, Var(R1 - R2) = 4/11; one
    more vote: 1/12 and 4/12. Own intervals give 2 x 1/132, the gap w x 4/132."""
    games = np.array([[0.0, 10.0], [10.0, 0.0]])
    for w in (0.0, 1.0, 4.0):
        info = pair_information(games, np.zeros(2), top=1, top_weight=w)
        assert info[0, 1] == pytest.approx((2 + 4 * w) / 132, rel=1e-12)
        assert info[1, 0] == 0 and info[0, 0] == 0


def test_matches_a_brute_force_refit_of_the_covariance():
    rng = np.random.default_rng(3)
    k = 5
    games = np.triu(rng.integers(0, 60, (k, k)).astype(float), 1)
    games += games.T
    theta = rng.normal(0, 0.6, k)
    cold = np.array([False, False, False, False, True])
    info = pair_information(games, theta, cold=cold, top=2, top_weight=3.0, cold_weight=5.0)
    p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))
    q = p * (1 - p)
    h = laplacian((games + 1.0) * q * (1 - np.eye(k)))
    before = np.linalg.pinv(h)
    order = [i for i in np.argsort(-theta) if not cold[i]]
    contrasts = [(1.0, np.eye(k)[m]) for m in range(k)]
    contrasts += [(3.0, np.eye(k)[order[r]] - np.eye(k)[order[r + 1]]) for r in range(2)]
    for i in range(k):
        for j in range(i + 1, k):
            x = np.eye(k)[i] - np.eye(k)[j]
            after = np.linalg.pinv(h + q[i, j] * np.outer(x, x))
            expected = sum(w * (c @ before @ c - c @ after @ c) for w, c in contrasts)
            expected *= 6.0 if cold[i] or cold[j] else 1.0
            assert info[i, j] == pytest.approx(expected, rel=1e-8)


def test_mix_sums_to_one_keeps_the_floor_and_spans_latency_to_information():
    rng = np.random.default_rng(1)
    k, floor = 6, 0.2
    cost = rng.uniform(0.3, 3.0, (k, k))
    cost = (cost + cost.T) / 2
    games = np.full((k, k), 40.0) - 40 * np.eye(k)
    info = pair_information(games, rng.normal(0, 0.5, k))
    n_pairs = k * (k - 1) / 2
    for lam in (0.0, 0.3, 0.7, 1.0):
        p = pair_distribution(cost, tau=0.5, floor=floor, information=info, information_weight=lam)
        upper = p[np.triu_indices(k, 1)]
        assert upper.sum() == pytest.approx(1.0)
        assert upper.min() >= floor / n_pairs - 1e-15
        assert np.all(np.tril(p) == 0)
    latency = pair_distribution(cost, tau=0.5, floor=floor)
    assert np.array_equal(
        pair_distribution(cost, tau=0.5, floor=floor, information=info, information_weight=0.0),
        latency,
    )
    only_info = pair_distribution(
        cost, tau=0.5, floor=floor, information=info, information_weight=1
    )
    iu = np.triu_indices(k, 1)
    assert only_info[iu] == pytest.approx(floor / n_pairs + (1 - floor) * info[iu] / info[iu].sum())
    with pytest.raises(ValueError, match="information_weight"):
        pair_distribution(cost, tau=0.5, floor=floor, information=info, information_weight=1.5)
    with pytest.raises(ValueError, match="information must be"):
        pair_distribution(cost, tau=0.5, floor=floor, information=-info, information_weight=0.5)


def test_cold_start_raises_a_new_models_share():
    k = 6
    games = np.full((k, k), 200.0) - 200 * np.eye(k)
    games[-1, :] = games[:, -1] = 0  # the newcomer: not on the board
    theta = np.append(np.linspace(0.6, -0.6, k - 1), 0.0)
    cost = 0.3 * np.add.outer(np.arange(k), np.arange(k))  # the newcomer is the slowest
    shares = {}
    for cold in (False, True):
        # top_weight 0: a newcomer at the board mean would otherwise join the top gaps
        info = pair_information(games, theta, cold=[False] * (k - 1) + [cold], top_weight=0)
        for lam in (0.0, 0.25, 0.5):
            probs = pair_distribution(
                cost, tau=1.0, floor=0.2, information=info, information_weight=lam
            )
            shares[cold, lam] = model_shares(probs)[-1]
    assert shares[False, 0.0] < 2 / k  # latency alone starves it
    assert shares[False, 0.25] > 2 / k  # no counts: information alone prefers it
    assert shares[True, 0.25] > shares[False, 0.25]
    assert shares[True, 0.5] > 0.8  # nearly every battle until the board has it


def test_top_pairs_carry_more_information_at_equal_counts():
    k = 6
    games = np.full((k, k), 100.0) - 100 * np.eye(k)
    theta = np.linspace(0.5, -0.5, k)
    info = pair_information(games, theta, top=3, top_weight=4.0)
    plain = pair_information(games, theta, top=3, top_weight=0.0)
    assert info[0, 1] > info[4, 5]
    assert info[0, 1] / info[4, 5] > plain[0, 1] / plain[4, 5]


def test_drawn_pairs_follow_the_recorded_probabilities():
    """Chi-square of 40,000 draws from an information-mixed table against the table itself."""
    rng = np.random.default_rng(11)
    k = 5
    cost = rng.uniform(0.3, 3.0, (k, k))
    games = np.triu(rng.integers(0, 80, (k, k)).astype(float), 1)
    info = pair_information(games + games.T, rng.normal(0, 0.5, k), cold=[0, 0, 0, 0, 1])
    probs = pair_distribution(cost, tau=0.5, floor=0.2, information=info, information_weight=0.5)
    n = 40_000
    counts = np.zeros((k, k))
    for _ in range(n):
        a, b = sample_pair(probs, rng)
        counts[min(a, b), max(a, b)] += 1
    iu = np.triu_indices(k, 1)
    expected = n * probs[iu]
    stat = float((((counts[iu] - expected) ** 2) / expected).sum())
    assert chi2.sf(stat, df=len(expected) - 1) > 1e-4
    # and a wrong table is told apart: the latency-only one
    other = n * pair_distribution(cost, tau=0.5, floor=0.2)[iu]
    assert chi2.sf(float((((counts[iu] - other) ** 2) / other).sum()), len(other) - 1) < 1e-6


def test_pair_tables_and_fit_recover_known_ratings():
    rng = np.random.default_rng(5)
    truth = np.array([0.8, 0.2, -0.1, -0.9])
    iu, ju = np.triu_indices(4, 1)
    n = 4000
    pick = rng.integers(0, len(iu), n)
    a, b = iu[pick], ju[pick]
    p = 1 / (1 + np.exp(-(truth[a] - truth[b])))
    outcome = np.where(rng.random(n) < p, OUTCOME_A, OUTCOME_B)
    outcome[:10] = OUTCOME_TIE
    counts = GroupedCounts(
        models=("a", "b", "c", "d"), a=a, b=b, outcome=outcome, count=np.ones(n, dtype=np.int64)
    )
    wins, games = pair_tables(counts)
    assert games.sum() / 2 == n and wins[a[0], b[0]] + wins[b[0], a[0]] >= 0.5
    theta, cov = fit_pair_ratings(wins)
    se = np.sqrt(np.diag(cov))
    assert np.all(np.abs(theta - (truth - truth.mean())) < 4 * se)
    # with every weight 1 the sandwich is the Fisher covariance
    _, sandwich = fit_pair_ratings(wins, squared=games)
    assert sandwich == pytest.approx(cov, rel=1e-6, abs=1e-12)


def test_simulated_newcomer_reaches_the_minimum_sooner_and_weights_stay_unbiased():
    world = ActiveWorld(
        ratings=(1100, 1050, 1000, 950, 900, 1000),
        median_latency=(0.5, 2.0, 0.8, 1.5, 0.3, 1.0),
        entry=1000,
        horizon=3000,
        width=80.0,
    )
    uniform = [run_arena(world, Sampler("uniform"), s) for s in range(3)]
    info = [run_arena(world, Sampler("info", tau=1.0, information_weight=0.5), s) for s in range(3)]
    assert max(r.newcomer_to_minimum or math.inf for r in info) < min(
        r.newcomer_to_minimum or math.inf for r in uniform
    )
    for run in info:
        assert run.wait_median > 0 and run.wait_p90 >= run.wait_median
        assert np.abs(run.error_weighted).max() < 60  # a few standard errors at 3,000 votes


def test_the_benchmark_runs_in_its_quick_mode():
    """`benchmarks/bench_active_sampling.py --quick --no-write`, as docs/ratings.md shows it."""
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "benchmarks/bench_active_sampling.py", "--quick", "--no-write"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout
    for name in ("uniform", "latency-aware (today)", "information lambda=0.4"):
        assert f"| {name} |" in out
    assert "Largest lambda keeping the median wait" in out
