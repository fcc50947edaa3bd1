"""Tests for analysis.correlation: Spearman/Pearson with a bootstrap interval over models."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from analysis.correlation import (
    DEFAULT_N_BOOT,
    MIN_MODELS,
    CorrelationResult,
    _rowwise_pearson,
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
    result = correlate(ARENA, BENCH, method=method, n_boot=200)
    assert result.method == method
    assert result.n == 8
    assert result.models == tuple(sorted(ARENA))
    assert result.value == pytest.approx(expected.statistic, abs=1e-12)
    assert result.p_value == pytest.approx(expected.pvalue, rel=1e-9)


def test_spearman_by_hand_on_a_tiny_case():
    # Ranks x: 1,2,3,4 ; y: 1,3,2,4 -> d^2 = 0+1+1+0 = 2 -> rho = 1 - 6*2/(4*15) = 0.8
    result = correlate_arrays([1, 2, 3, 4], [10, 30, 20, 40], method="spearman", n_boot=0)
    assert result.value == pytest.approx(0.8)
    assert math.isnan(result.ci_lower) and result.n_boot_used == 0


def test_only_models_in_both_and_with_numbers_are_used():
    a = {"x": 1.0, "y": 2.0, "z": 3.0, "w": None, "v": float("nan"), "u": 4.0}
    b = {"x": 1.0, "y": 3.0, "z": 2.0, "w": 5.0, "v": 6.0, "t": 7.0, "u": 5.0}
    result = correlate(a, b, n_boot=100)
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
    assert result.n_boot_used == 0


def test_constant_input_gives_empty_result_without_warnings():
    with np.errstate(all="raise"):
        result = correlate_arrays([1, 2, 3, 4], [5, 5, 5, 5])
    assert result.is_empty and result.n == 4


def test_ci_contains_estimate_on_a_typical_case():
    rng = np.random.default_rng(7)
    true = rng.normal(size=20)
    x = true + rng.normal(scale=0.5, size=20)
    y = true + rng.normal(scale=0.5, size=20)
    for method in ("spearman", "pearson"):
        result = correlate_arrays(x, y, method=method, seed=3)
        assert result.n_boot == DEFAULT_N_BOOT == 2_000
        assert result.ci_lower < result.value < result.ci_upper
        assert -1 <= result.ci_lower < result.ci_upper <= 1
        assert result.value > 0.5  # strongly related by construction
        assert result.n_boot_used == result.n_boot  # 20 models: no constant resample


def test_same_seed_same_interval_different_seed_different_interval():
    x, y = aligned()
    first = correlate_arrays(x, y, seed=11, n_boot=500)
    again = correlate_arrays(x, y, seed=11, n_boot=500)
    other = correlate_arrays(x, y, seed=12, n_boot=500)
    assert (first.ci_lower, first.ci_upper) == (again.ci_lower, again.ci_upper)
    assert (first.ci_lower, first.ci_upper) != (other.ci_lower, other.ci_upper)


def test_mapping_order_does_not_change_the_interval():
    reversed_arena = dict(reversed(list(ARENA.items())))
    assert correlate(ARENA, BENCH, seed=5) == correlate(reversed_arena, BENCH, seed=5)


def test_constant_resamples_are_dropped_and_counted():
    # With 3 models, 3 of the 27 equally likely resamples repeat one model (constant),
    # and resamples with two distinct models and a tie in y are constant in y too.
    result = correlate_arrays([1, 2, 3], [1, 3, 3], method="spearman", n_boot=4_000, seed=1)
    assert 0 < result.n_boot_used < result.n_boot
    dropped = 1 - result.n_boot_used / result.n_boot
    # P(constant x) = 3/27; P(x not constant but y constant) = P(only models 2,3) = 6/27.
    assert dropped == pytest.approx(9 / 27, abs=0.03)


def test_bootstrap_matches_a_plain_loop():
    x, y = (np.array(v) for v in aligned())
    n_boot, seed = 300, 4
    vectorised = correlate_arrays(x, y, method="spearman", n_boot=n_boot, seed=seed)
    index = np.random.default_rng(seed).integers(0, len(x), size=(n_boot, len(x)))
    values = []
    for row in index:
        xs, ys = x[row], y[row]
        if np.ptp(xs) == 0 or np.ptp(ys) == 0:
            continue
        values.append(stats.spearmanr(xs, ys).statistic)
    assert vectorised.n_boot_used == len(values)
    lower, upper = np.quantile(values, [0.025, 0.975])
    assert vectorised.ci_lower == pytest.approx(lower, abs=1e-12)
    assert vectorised.ci_upper == pytest.approx(upper, abs=1e-12)


def test_rowwise_pearson_flags_constant_rows():
    x = np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0], [0.1, 0.2, 0.3]])
    y = np.array([[2.0, 4.0, 7.0], [1.0, 2.0, 3.0], [0.3, 0.3, 0.3]])
    r = _rowwise_pearson(x, y)
    assert r[0] == pytest.approx(stats.pearsonr(x[0], y[0]).statistic)
    assert math.isnan(r[1]) and math.isnan(r[2])


def test_nan_pairs_are_dropped_from_arrays():
    result = correlate_arrays([1, 2, float("nan"), 4, 5], [2, 1, 3, float("nan"), 6], n_boot=0)
    assert result.n == 3


def test_confidence_level_changes_width():
    x, y = aligned()
    wide = correlate_arrays(x, y, confidence=0.95, seed=2)
    narrow = correlate_arrays(x, y, confidence=0.5, seed=2)
    assert wide.ci_upper - wide.ci_lower > narrow.ci_upper - narrow.ci_lower


@pytest.mark.parametrize(
    "kwargs",
    [{"method": "kendall"}, {"confidence": 1.0}, {"n_boot": -1}],
)
def test_bad_arguments_raise(kwargs):
    with pytest.raises(ValueError):
        correlate_arrays([1, 2, 3], [1, 2, 3], **kwargs)


def test_mismatched_lengths_raise():
    with pytest.raises(ValueError):
        correlate_arrays([1, 2, 3], [1, 2])


def test_result_is_a_frozen_dataclass():
    result = correlate(ARENA, BENCH, n_boot=50)
    assert isinstance(result, CorrelationResult)
    with pytest.raises(AttributeError):
        result.value = 0.0  # type: ignore[misc]
