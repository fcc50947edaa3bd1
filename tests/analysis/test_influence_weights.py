"""The per-user influence bound (analysis.weights.influence_weights) and context dedup."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.bradley_terry import fit_bt
from analysis.grouping import OUTCOME_A, GroupedCounts
from analysis.simulate import simulate_battles
from analysis.weights import dedup_weights, influence_weights


def test_a_flood_from_one_account_counts_like_at_most_the_cap():
    rng = np.random.default_rng(0)
    user = np.r_[np.zeros(5000, dtype=np.int64), rng.integers(1, 400, 3000)]
    day = np.r_[np.arange(5000) // 500, rng.integers(0, 30, 3000)]  # 500 a day for 10 days
    w = influence_weights(user, day, cap_day=50, cap_total=200)
    assert w[:5000].sum() == pytest.approx(200.0)
    per_day = np.bincount(day[:5000], weights=w[:5000])
    assert per_day.max() <= 50 + 1e-9
    # the honest users are below both caps: weight 1 on every vote
    assert np.all(w[5000:] == 1.0)


def test_the_daily_cap_binds_before_the_total():
    user = np.zeros(300, dtype=np.int64)
    day = np.r_[np.zeros(200, dtype=np.int64), np.ones(100, dtype=np.int64)]
    w = influence_weights(user, day, cap_day=50, cap_total=None)
    assert w[:200] == pytest.approx(np.full(200, 0.25))
    assert w[200:] == pytest.approx(np.full(100, 0.5))
    assert influence_weights(user, day, cap_day=None, cap_total=None).sum() == 300


def test_a_capped_flood_moves_the_fit_like_the_cap_in_votes():
    honest = simulate_battles(np.array([1000.0, 1000.0, 1000.0]), 3000, seed=1)
    flood = 2000
    a = np.r_[honest.a, np.zeros(flood, dtype=np.int64)]
    b = np.r_[honest.b, np.ones(flood, dtype=np.int64)]
    outcome = np.r_[honest.outcome, np.full(flood, OUTCOME_A)]
    user = np.r_[np.arange(3000) + 1, np.zeros(flood, dtype=np.int64)]
    w = influence_weights(user, np.zeros(len(a), dtype=np.int64), cap_day=None, cap_total=100)

    def rating(weight: np.ndarray, keep: np.ndarray) -> np.ndarray:
        counts = GroupedCounts(models=("x", "y", "z"), a=a[keep], b=b[keep],
                               outcome=outcome[keep], count=np.ones(int(keep.sum())),
                               weight=weight[keep])  # fmt: skip
        return np.asarray(fit_bt(counts).rating)

    everything = np.ones(len(a), dtype=bool)
    hundred = np.r_[np.ones(3000, dtype=bool), np.arange(flood) < 100]
    capped = rating(w, everything)
    assert capped == pytest.approx(rating(np.ones(len(a)), hundred), abs=1e-6)
    assert rating(np.ones(len(a)), everything)[0] - capped[0] > 50


def test_repeated_contexts_of_one_user_count_once():
    user = np.array([0, 0, 0, 0, 1, 1, 2])
    context = np.array([7, 7, 7, 8, 7, -1, -1])
    w = dedup_weights(user, context)
    assert w == pytest.approx([1 / 3, 1 / 3, 1 / 3, 1, 1, 1, 1])
    # dedup first, then the cap on what is left
    capped = influence_weights(user, np.zeros(7, dtype=np.int64), cap_day=None, cap_total=1.5,
                               base=w)  # fmt: skip
    assert capped[:4].sum() == pytest.approx(1.5)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="caps"):
        influence_weights(np.zeros(2), np.zeros(2), cap_day=0, cap_total=None)
    with pytest.raises(ValueError, match="one entry per vote"):
        dedup_weights(np.zeros(2), np.zeros(3))
