"""count_by and dense_codes (analysis/key_counts.py) against counting in plain Python."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from analysis import key_counts
from analysis.key_counts import count_by, dense_codes


def _python(columns: list[np.ndarray]) -> Counter:
    return Counter(zip(*(c.tolist() for c in columns), strict=True))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("path", ["bincount", "sort"])
def test_counts_equal_a_python_count_in_key_order(seed, path, monkeypatch):
    if path == "sort":  # no dense table at all: every count by sorting
        monkeypatch.setattr(key_counts, "_BINCOUNT_MAX_SPACE", 0)
    rng = np.random.default_rng(seed)
    sizes = [int(s) for s in rng.integers(1, 40, size=rng.integers(1, 5))]
    n = int(rng.integers(0, 5000))
    columns = [rng.integers(0, s, size=n) for s in sizes]
    out, counts = count_by(columns, sizes)
    rows = list(zip(*(c.tolist() for c in out), strict=True))
    assert dict(zip(rows, counts.tolist(), strict=True)) == _python(columns)
    assert rows == sorted(rows)  # first column most significant
    assert all(c.dtype == np.int64 for c in out) and counts.dtype == np.int64


def test_a_large_sparse_key_space_is_counted_by_sorting():
    # 1e6 x 1e6 x 1e6 keys: far beyond a dense table; must still count right.
    sizes = [10**6] * 3
    columns = [np.array([5, 999_999, 5, 0]), np.array([7, 1, 7, 0]), np.array([0, 2, 0, 999_999])]
    out, counts = count_by(columns, sizes)
    assert dict(
        zip(zip(*(c.tolist() for c in out), strict=True), counts.tolist(), strict=True)
    ) == {
        (0, 0, 999_999): 1,
        (5, 7, 0): 2,
        (999_999, 1, 2): 1,
    }


def test_a_key_space_beyond_int64_is_refused():
    with pytest.raises(OverflowError):
        count_by([np.zeros(3, dtype=np.int64)] * 3, [2**21, 2**21, 2**21])


@pytest.mark.parametrize(
    "values",
    [
        np.array([9800, 9790, 9800, 0, 12]),  # small: presence table
        np.array([-(2**63), 2**63 - 1, 5, -3, 5]),  # 64-bit hashes: sort
        np.array([], dtype=np.int64),
    ],
)
def test_dense_codes_index_the_sorted_distinct_values(values):
    distinct, code = dense_codes(values)
    assert distinct.tolist() == sorted(set(values.tolist()))
    assert distinct[code].tolist() == values.tolist()
    assert code.dtype == np.int64
