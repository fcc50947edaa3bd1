"""Ignored pairs (analysis.ignored): rates per model and pair, and the both-bad board variant."""

import numpy as np
import pytest

from analysis.bradley_terry import fit_bt
from analysis.grouping import OUTCOME_TIE, GroupedCounts
from analysis.ignored import add_ignored_as_ties, ignored_rates
from analysis.simulate import simulate_battles

MODELS = ("x", "y", "z")


def test_rates_per_model_and_pair():
    r = ignored_rates(
        MODELS, a=np.array([0, 1, 0, 2]), b=np.array([1, 0, 2, 1]),
        shown=np.array([10, 10, 5, 0]), ignored=np.array([2, 4, 5, 0]),
    )  # fmt: skip
    assert r.pair_shown[0, 1] == r.pair_shown[1, 0] == 20 and r.pair_ignored[0, 1] == 6
    assert r.pair_rate[0, 1] == pytest.approx(0.3) and r.pair_rate[0, 2] == 1.0
    assert np.isnan(r.pair_rate[1, 2])
    assert r.shown.tolist() == [25, 20, 5] and r.ignored.tolist() == [11, 6, 5]
    assert np.allclose(r.rate, [11 / 25, 6 / 20, 1.0])
    assert r.overall == pytest.approx(11 / 25)
    with pytest.raises(ValueError):
        ignored_rates(MODELS, a=np.array([0]), b=np.array([1]), shown=[1], ignored=[2])


def test_ignored_pairs_become_ties_that_pull_the_pair_together():
    g = simulate_battles(np.array([1100.0, 1000.0, 900.0]), 3000, seed=0).grouped()
    both_bad = add_ignored_as_ties(g, a=np.array([0]), b=np.array([2]), ignored=np.array([500]))
    assert both_bad.total == g.total + 500
    tie = (both_bad.a == 0) & (both_bad.b == 2) & (both_bad.outcome == OUTCOME_TIE)
    assert both_bad.count[tie].sum() >= 500
    before, after = fit_bt(g).rating, fit_bt(both_bad).rating
    assert after[0] - after[2] < before[0] - before[2] - 50
    users = GroupedCounts(models=g.models, a=g.a, b=g.b, outcome=g.outcome, count=g.count,
                          user=np.zeros(len(g.count), dtype=np.int64))  # fmt: skip
    with pytest.raises(ValueError):
        add_ignored_as_ties(users, a=np.array([0]), b=np.array([2]), ignored=np.array([5]))
    with_users = add_ignored_as_ties(
        users, a=np.array([0]), b=np.array([2]), ignored=np.array([5]), user=np.array([3])
    )
    assert with_users.n_users == 4
