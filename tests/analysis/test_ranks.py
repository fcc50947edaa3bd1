"""Rank (UB) (analysis.ranks)."""

import numpy as np
import pytest

from analysis.ranks import rank_ub


def test_rank_ub_counts_models_clearly_above():
    lower = np.array([10.0, 8.0, 1.0, 0.5, np.nan])
    upper = np.array([12.0, 11.0, 9.0, 2.0, np.nan])
    # model 0: nobody's lower bound above 12 -> 1; model 1 overlaps model 0 -> 1;
    # model 2: lower bound 10 (model 0) > 9 -> 2; model 3: 10 and 8 > 2 -> 3; NaN -> 0
    assert rank_ub(lower, upper).tolist() == [1, 1, 2, 3, 0]


def test_ties_and_touching_bounds_do_not_separate():
    lower = np.array([5.0, 3.0])
    upper = np.array([7.0, 5.0])  # model 0's lower bound equals model 1's upper: not above
    assert rank_ub(lower, upper).tolist() == [1, 1]
    assert rank_ub(np.array([]), np.array([])).tolist() == []


def test_shape_checks():
    with pytest.raises(ValueError):
        rank_ub(np.zeros(2), np.zeros(3))


def test_intervals_apart():
    from analysis.ranks import intervals_apart

    assert intervals_apart((1.0, 2.0), (2.5, 3.0)) is True
    assert intervals_apart((2.5, 3.0), (1.0, 2.0)) is True
    assert intervals_apart((1.0, 2.6), (2.5, 3.0)) is False
    assert intervals_apart((1.0, None), (2.5, 3.0)) is None
    assert intervals_apart((1.0, float("inf")), (2.5, 3.0)) is None
