"""Tests for analysis.correlation: Spearman/Pearson with Fisher-z intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from analysis.correlation import (
    MIN_MODELS,
    CorrelationResult,
    correlate,
    correlate_arrays,
)

# Hand-made leaderboards with ties in both (b ties twice, a once).
ARENA = {"m1": 1030.0, "m2": 1018.0, "m3": 1000.0, "m4": 987.0, "m5": 982.0, "m6": 982.0,
         "m7": 971.0, "m8": 951.0}  # fmt: skip
BENCH = {"m1": 52.0, "m2": 61.0, "m3": 40.0, "m4": 40.0, "m5": 47.5, "m6": 33.0, "m7": 47.5,
         "m8": 20.0, "only_in_bench": 99.0}  # fmt: skip


def aligned() -> tuple[list[float], list[float]]:
    names = sorted(ARENA.keys() & BENCH.keys())
    return [ARENA[n] for n in names], [BENCH[n] for n in names]


@pytest.mark.parametrize("method", ["spearman", "pearson"])
def test_value_and_p_value_equal_scipy_including_ties(method):
    x, y = aligned()
    expected = stats.spearmanr(x, y) if method == "spearman" else stats.pearsonr(x, y)
    result = correlate(ARENA, BENCH, method=method)
    assert result.method == method
    assert result.n == 8
    assert result.models == tuple(sorted(ARENA))
    assert result.value == pytest.approx(expected.statistic, abs=1e-12)
    assert result.p_value == pytest.approx(expected.pvalue, rel=1e-9)


def test_spearman_by_hand_on_a_tiny_case():
    # Ranks x: 1,2,3,4 ; y: 1,3,2,4 -> d^2 = 0+1+1+0 = 2 -> rho = 1 - 6*2/(4*15) = 0.8
    result = correlate_arrays([1, 2, 3, 4], [10, 30, 20, 40], method="spearman")
    assert result.value == pytest.approx(0.8)
    # four models: tanh(atanh(0.8) -+ 1.96 sqrt(1.32))
    assert result.ci_lower == pytest.approx(math.tanh(math.atanh(0.8) - 1.959964 * 1.32**0.5))


def test_only_models_in_both_and_with_numbers_are_used():
    a = {"x": 1.0, "y": 2.0, "z": 3.0, "w": None, "v": float("nan"), "u": 4.0}
    b = {"x": 1.0, "y": 3.0, "z": 2.0, "w": 5.0, "v": 6.0, "t": 7.0, "u": 5.0}
    result = correlate(a, b)
    assert result.models == ("u", "x", "y", "z")
    assert result.n == 4


@pytest.mark.parametrize("n", [0, 1, 2])
@pytest.mark.parametrize("method", ["spearman", "pearson"])
def test_fewer_than_three_models_gives_documented_empty_result(n, method):
    a = {f"m{i}": float(i) for i in range(n)}
    result = correlate(a, dict(a), method=method)
    assert MIN_MODELS == 3
    assert result.n == n
    assert result.is_empty
    for value in (result.value, result.ci_lower, result.ci_upper, result.p_value):
        assert math.isnan(value)


def test_constant_input_gives_empty_result_without_warnings():
    with np.errstate(all="raise"):
        result = correlate_arrays([1, 2, 3, 4], [5, 5, 5, 5])
    assert result.is_empty and result.n == 4


def test_interval_is_fisher_z_by_hand():
    x, y = aligned()
    for method in ("spearman", "pearson"):
        result = correlate_arrays(x, y, method=method)
        r, n = result.value, 8
        sd = math.sqrt((1 + r * r / 2) / (n - 3)) if method == "spearman" else 1 / math.sqrt(n - 3)
        z = math.atanh(r)
        assert result.ci_lower == pytest.approx(math.tanh(z - 1.959964 * sd), abs=1e-6)
        assert result.ci_upper == pytest.approx(math.tanh(z + 1.959964 * sd), abs=1e-6)
        assert result.ci_lower < r < result.ci_upper


def test_a_perfect_spearman_keeps_an_interval():
    result = correlate_arrays([1, 2, 3, 4, 5], [2, 4, 6, 8, 10], method="spearman")
    assert result.value == pytest.approx(1.0)
    assert -1 < result.ci_lower < 0.9 and result.ci_upper == pytest.approx(1.0)


def test_three_models_give_a_value_without_an_interval():
    result = correlate_arrays([1, 2, 3], [1, 3, 2], method="pearson")
    assert not math.isnan(result.value)
    assert math.isnan(result.ci_lower) and math.isnan(result.ci_upper)


def _coverage(method, n, rho, reps, seed):
    rng = np.random.default_rng(seed)
    true = 6 / math.pi * math.asin(rho / 2) if method == "spearman" else rho
    hits = 0
    for _ in range(reps):
        xy = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=n)
        result = correlate_arrays(xy[:, 0], xy[:, 1], method=method)
        hits += result.ci_lower <= true <= result.ci_upper
    return hits / reps


@pytest.mark.parametrize(
    ("method", "n", "rho"),
    [
        ("pearson", 5, 0.5),
        ("pearson", 12, 0.8),
        ("pearson", 30, 0.3),
        ("spearman", 8, 0.6),
        ("spearman", 12, 0.9),
        ("spearman", 30, 0.3),
    ],
)
def test_intervals_cover_a_known_correlation(method, n, rho):
    # bivariate normal leaderboards with a known population correlation (Spearman's:
    # 6/pi asin(rho/2)); benchmarks/bench_correlation_coverage.py runs the full grid
    coverage = _coverage(method, n, rho, reps=1_500, seed=n)
    assert 0.93 <= coverage <= 0.97, coverage


def test_spearman_on_five_models_is_conservative():
    # rho on five models takes 21 values: no interval can hold 95% exactly, ours errs wide
    assert 0.95 <= _coverage("spearman", 5, 0.9, reps=1_500, seed=5) <= 0.995


def test_nan_pairs_are_dropped_from_arrays():
    result = correlate_arrays([1, 2, float("nan"), 4, 5], [2, 1, 3, float("nan"), 6])
    assert result.n == 3


def test_confidence_level_changes_width():
    x, y = aligned()
    wide = correlate_arrays(x, y, confidence=0.95)
    narrow = correlate_arrays(x, y, confidence=0.5)
    assert wide.ci_upper - wide.ci_lower > narrow.ci_upper - narrow.ci_lower


@pytest.mark.parametrize("kwargs", [{"method": "kendall"}, {"confidence": 1.0}])
def test_bad_arguments_raise(kwargs):
    with pytest.raises(ValueError):
        correlate_arrays([1, 2, 3], [1, 2, 3], **kwargs)


def test_mismatched_lengths_raise():
    with pytest.raises(ValueError):
        correlate_arrays([1, 2, 3], [1, 2])


def test_result_is_a_frozen_dataclass():
    result = correlate(ARENA, BENCH)
    assert isinstance(result, CorrelationResult)
    with pytest.raises(AttributeError):
        result.value = 0.0  # type: ignore[misc]
