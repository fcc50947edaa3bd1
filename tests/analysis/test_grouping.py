"""Grouping raw battles into counts (analysis.grouping)."""

import numpy as np
import pytest

from analysis.grouping import (
    OUTCOME_A,
    OUTCOME_B,
    OUTCOME_TIE,
    GroupedCounts,
    from_count_rows,
    group_battles,
)


def test_group_battles_merges_and_sorts():
    g = group_battles(
        ["x", "y", "x", "x", "z"],
        ["y", "x", "y", "y", "x"],
        [OUTCOME_A, OUTCOME_B, OUTCOME_A, OUTCOME_TIE, OUTCOME_A],
    )
    assert g.models == ("x", "y", "z")
    rows = list(zip(g.a.tolist(), g.b.tolist(), g.outcome.tolist(), g.count.tolist(), strict=True))
    assert rows == [
        (0, 1, OUTCOME_A, 2),
        (0, 1, OUTCOME_TIE, 1),
        (1, 0, OUTCOME_B, 1),
        (2, 0, OUTCOME_A, 1),
    ]
    assert g.total == 5
    assert g.battles_per_model().tolist() == [5, 4, 1]


def test_explicit_models_keep_order_and_players_without_battles():
    g = group_battles(["b"], ["a"], [OUTCOME_A], models=["c", "b", "a"])
    assert g.models == ("c", "b", "a")
    assert g.battles_per_model().tolist() == [0, 1, 1]


def test_integer_indices_need_models_and_match_strings():
    a = np.array([0, 1, 1, 2])
    b = np.array([1, 0, 2, 0])
    o = np.array([0, 1, 2, 0])
    with pytest.raises(ValueError):
        group_battles(a, b, o)
    g_int = group_battles(a, b, o, models=["p", "q", "r"])
    names = np.array(["p", "q", "r"])
    g_str = group_battles(names[a].tolist(), names[b].tolist(), o.tolist(), models=["p", "q", "r"])
    assert g_int == g_str


@pytest.mark.parametrize(
    ("a", "b", "o", "models"),
    [
        (["x"], ["x"], [0], None),  # self battle
        (["x"], ["y"], [3], None),  # bad outcome code
        (["x"], ["w"], [0], ["x", "y"]),  # unknown model
        (["x", "y"], ["y"], [0], None),  # ragged
    ],
)
def test_group_battles_rejects_bad_input(a, b, o, models):
    with pytest.raises(ValueError):
        group_battles(a, b, o, models=models)


def test_from_count_rows_sums_duplicates_and_drops_zeros():
    rows = [("m1", "m2", OUTCOME_A, 3), ("m1", "m2", OUTCOME_A, 2), ("m2", "m1", OUTCOME_TIE, 0)]
    g = from_count_rows(rows, positions_known=False)
    assert g.models == ("m1", "m2")
    assert g.count.tolist() == [5]
    assert g.positions_known is False
    with pytest.raises(ValueError):
        from_count_rows([("m1", "m2", OUTCOME_A, -1)])
    with pytest.raises(ValueError):
        from_count_rows([("m1", "m9", OUTCOME_A, 1)], models=["m1", "m2"])


def test_same_battles_in_any_row_order_compare_equal_and_are_read_only():
    g1 = GroupedCounts(models=("a", "b"), a=[0, 1], b=[1, 0], outcome=[0, 2], count=[4, 1])
    g2 = GroupedCounts(
        models=("a", "b"), a=[1, 0, 0], b=[0, 1, 1], outcome=[2, 0, 0], count=[1, 1, 3]
    )
    assert g1 == g2
    with pytest.raises(ValueError):
        g1.count[0] = 7
    assert g1 != GroupedCounts(models=("a", "b"), a=[0], b=[1], outcome=[0], count=[4])


def test_empty_input():
    g = from_count_rows([])
    assert g.models == () and g.total == 0 and len(g.count) == 0
    g = group_battles([], [], [], models=["solo"])
    assert g.models == ("solo",) and g.battles_per_model().tolist() == [0]
