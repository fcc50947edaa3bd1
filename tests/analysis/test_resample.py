"""The exact fast multinomial sampler behind the bootstrap (analysis.resample)."""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binom, chi2, multinomial

from analysis.resample import MultinomialSampler, multinomial_counts


def _chi2_pvalue(observed: np.ndarray, expected: np.ndarray) -> float:
    keep = expected >= 5  # pool the thin tail cells into one
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    stat = float(((obs - exp) ** 2 / exp).sum())
    return float(chi2.sf(stat, len(obs) - 1))


def test_every_round_has_exactly_n_battles_and_is_reproducible():
    counts = np.array([70, 3, 0, 250, 1, 18, 900])
    x = multinomial_counts(counts, 500, np.random.default_rng(7))
    assert x.shape == (500, 7) and x.dtype == np.int64
    assert np.all(x.sum(axis=1) == counts.sum())
    assert np.all(x[:, 2] == 0)  # a cell that never happened is never drawn
    assert np.array_equal(x, multinomial_counts(counts, 500, np.random.default_rng(7)))
    assert not np.array_equal(x, multinomial_counts(counts, 500, np.random.default_rng(8)))


def test_poisson_path_marginals_are_exactly_binomial():
    counts = np.array([5, 40, 355])  # N = 400 > M: thinned Poisson + top-up path
    assert not MultinomialSampler(counts).direct
    rounds = 100_000
    x = multinomial_counts(counts, rounds, np.random.default_rng(1))
    n = counts.sum()
    for cell in range(2):
        k = np.arange(n + 1)
        expected = rounds * binom.pmf(k, n, counts[cell] / n)
        observed = np.bincount(x[:, cell], minlength=n + 1)
        assert _chi2_pvalue(observed, expected) > 1e-3


def test_direct_path_joint_distribution_is_multinomial():
    counts = np.array([1, 1, 2])
    sampler = MultinomialSampler(counts)
    assert sampler.direct
    rounds = 60_000
    x = sampler.draw(rounds, np.random.default_rng(2))
    n = int(counts.sum())
    outcomes = [c for c in itertools.product(range(n + 1), repeat=3) if sum(c) == n]
    index = {c: i for i, c in enumerate(outcomes)}
    observed = np.bincount([index[tuple(r)] for r in x.tolist()], minlength=len(outcomes))
    expected = rounds * np.array([multinomial.pmf(c, n, counts / n) for c in outcomes])
    assert _chi2_pvalue(observed, expected) > 1e-3


@pytest.mark.parametrize("n_battles", [2_000, 200_000, 30_000_000])
def test_moments_match_the_multinomial(n_battles):
    rng = np.random.default_rng(3)
    counts = rng.multinomial(n_battles, rng.dirichlet(np.ones(300)))
    # 200k and 30M battles over 300 cells: large counts, drawn by binomials, not tables
    if n_battles > 100_000:
        assert MultinomialSampler(counts)._tables is None
    rounds = 4000
    x = multinomial_counts(counts, rounds, rng).astype(float)
    n = counts.sum()
    p = counts / n
    var = n * p * (1 - p)
    z_mean = (x.mean(axis=0) - counts)[var > 0] / np.sqrt(var[var > 0] / rounds)
    assert np.max(np.abs(z_mean)) < 5.0
    ratio = x.var(axis=0, ddof=1)[var > 0] / var[var > 0]
    assert abs(np.mean(ratio) - 1.0) < 0.02
    # the cells are negatively correlated (fixed total): half of the cells together vary as
    # Binomial(N, q), i.e. N q (1 - q), not N q as independent Poisson cells would
    half = x[:, ::2].sum(axis=1)
    q = p[::2].sum()
    assert math.isclose(half.var(ddof=1), n * q * (1 - q), rel_tol=0.1)


def test_zero_rounds_and_zero_battles():
    assert multinomial_counts(np.array([3, 4]), 0, np.random.default_rng(0)).shape == (0, 2)
    assert np.all(multinomial_counts(np.zeros(3, dtype=int), 4, np.random.default_rng(0)) == 0)
    with pytest.raises(ValueError):
        MultinomialSampler(np.array([1, -1]))


def test_large_counts_marginals_are_exactly_binomial():
    counts = np.array([20_000, 400_000, 4_580_000])  # 5M battles: the binomial path
    sampler = MultinomialSampler(counts)
    assert not sampler.direct and sampler._tables is None
    assert not sampler.can_be_zero().any()
    rounds = 20_000
    x = sampler.draw(rounds, np.random.default_rng(4))
    assert np.all(x.sum(axis=1) == counts.sum())
    n = int(counts.sum())
    for cell in range(2):
        p = counts[cell] / n
        sd = math.sqrt(n * p * (1 - p))
        k = np.arange(int(counts[cell] - 6 * sd), int(counts[cell] + 6 * sd) + 1)
        expected = rounds * binom.pmf(k, n, p)
        observed = np.array([np.sum(x[:, cell] == v) for v in k])
        assert _chi2_pvalue(observed, expected) > 1e-3


def _board_counts(n_battles: int, seed: int) -> np.ndarray:
    """Category counts like a board's: 165 (pair, result) cells, a few of them small."""
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n_battles - 343, rng.dirichlet(np.ones(162)))
    return np.concatenate([[3, 40, 300], counts])  # e.g. ties of rarely seen pairs


@pytest.mark.parametrize("n_battles", [200_000, 10_000_000])
def test_board_sized_counts_are_numpys_multinomial_draw_for_draw(n_battles):
    # a board at 1M-10M battles: few cells with large counts, drawn by numpy's own
    # multinomial (sequential exact binomials); several chunks give the same stream
    counts = _board_counts(n_battles, 5)
    sampler = MultinomialSampler(counts)
    assert not sampler.direct and sampler._tables is None
    x = sampler.draw(300, np.random.default_rng(11))
    n = int(counts.sum())
    expected = np.random.default_rng(11).multinomial(n, counts / n, size=300)
    assert np.array_equal(x, expected)
    assert np.array_equal(sampler.can_be_zero(), counts <= 46)


@pytest.mark.parametrize("n_battles", [200_000, 10_000_000])
def test_board_sized_counts_match_the_multinomial_distribution(n_battles):
    # what the bootstrap needs of a board's redraws, against the multinomial's own law:
    # exact totals, binomial marginals (chi-square, small and large cells), the negative
    # covariances of a fixed total, and the zeros of a cell with a handful of battles
    counts = _board_counts(n_battles, 6)
    n = int(counts.sum())
    p = counts / n
    rounds = 20_000
    x = MultinomialSampler(counts).draw(rounds, np.random.default_rng(12))
    assert np.all(x.sum(axis=1) == n)
    big = int(np.argmax(counts))
    for cell in (0, 2, big):
        sd = math.sqrt(n * p[cell] * (1 - p[cell]))
        lo, hi = max(0, int(counts[cell] - 6 * sd)), int(counts[cell] + 6 * sd) + 1
        k = np.arange(lo, hi + 1)
        expected = rounds * binom.pmf(k, n, p[cell])
        observed = np.array([np.sum(x[:, cell] == v) for v in k])
        assert _chi2_pvalue(observed, expected) > 1e-3
    # covariance of the largest cell with the others: -N p_i p_j, here pooled over all
    # the others (X_big against N - X_big is exactly -Var(X_big))
    cells = [big, int(np.argsort(counts)[len(counts) // 2]), 1]
    c = np.cov(x[:, cells].T.astype(float))
    for i in range(3):
        for j in range(3):
            want = n * p[cells[i]] * ((i == j) - p[cells[j]])
            # sampling sd of a covariance estimate: sqrt((s_ii s_jj + s_ij^2) / rounds)
            s_ii, s_jj = n * p[cells[i]] * (1 - p[cells[i]]), n * p[cells[j]] * (1 - p[cells[j]])
            assert abs(c[i, j] - want) < 5 * math.sqrt((s_ii * s_jj + want**2) / rounds)
    zeros = np.mean(x[:, 0] == 0)  # P(X = 0) = (1 - p)^N
    assert abs(zeros - (1 - p[0]) ** n) < 5 * math.sqrt((1 - p[0]) ** n / rounds) + 1e-3
