"""Robustness of ranks (analysis.robustness): influence estimates and validated counts against
brute force over every removal set on small arenas, and against refits on a larger one."""

import itertools

import numpy as np
import pytest

from analysis.bradley_terry import fit_bt
from analysis.grouping import OUTCOME_A, OUTCOME_B, GroupedCounts, from_count_rows
from analysis.leaderboard import compute_leaderboard
from analysis.robustness import rank_robustness
from analysis.simulate import simulate_battles


def _brute_force_min(g: GroupedCounts, upper: str, lower: str) -> int | None:
    """Fewest votes whose removal puts ``lower`` above ``upper``, leaving every row at least
    one vote (as the method does: emptying a row can make a rating infinite)."""
    i, j = g.index(upper), g.index(lower)
    best = None
    for removal in itertools.product(*[range(int(c)) for c in g.count]):
        m = sum(removal)
        if best is not None and m >= best:
            continue
        sub = GroupedCounts(models=g.models, a=g.a, b=g.b, outcome=g.outcome,
                            count=g.count - np.array(removal))  # fmt: skip
        fit = fit_bt(sub)
        if fit.status[i] != "ok" or fit.status[j] != "ok":
            continue  # the pair is no longer both rated: not a swap on the board
        if fit.rating[j] > fit.rating[i] + 1e-6:
            best = m
    return best


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_validated_counts_are_close_to_the_brute_force_minimum(seed):
    rng = np.random.default_rng(seed)
    names = ["p", "q", "r"]
    rows = []
    for x, y in itertools.combinations(names, 2):
        rows += [
            (x, y, OUTCOME_A, int(rng.integers(2, 7))),
            (x, y, OUTCOME_B, int(rng.integers(2, 7))),
        ]
    g = from_count_rows(rows)
    fit = fit_bt(g)
    flips = rank_robustness(fit)
    assert len(flips) == 2
    for flip in flips:
        exact = _brute_force_min(g, flip.upper, flip.lower)
        assert flip.votes is not None and exact is not None
        # a real removal set of that size swaps the pair, so it is never below the minimum
        assert exact <= flip.votes <= exact + 1, (flip, exact)
        # the linear estimate alone is rough on a tiny arena (removing 5 of 8 battles of a
        # pair changes the curvature); the refits above are what make the number exact
        assert flip.votes_estimate is not None and exact / 2 <= flip.votes_estimate <= 2.5 * exact


def test_larger_arena_influence_against_refits():
    true = np.array([1060.0, 1040.0, 1000.0, 990.0, 950.0])
    g = simulate_battles(true, 8000, tie_rate=0.1, seed=4).grouped()
    fit = fit_bt(g)
    flips = rank_robustness(fit)
    assert [f.upper for f in flips] == [fit.models[i] for i in np.argsort(-fit.rating)[:-1]]
    for f in flips:
        assert f.votes is not None and f.votes_estimate is not None
        # the linear estimate is close to the refit-validated number
        assert abs(f.votes - f.votes_estimate) <= max(3, 0.15 * f.votes), f
        assert f.gap > 0
    # a wider gap needs more votes removed than a narrow one
    by_gap = sorted(flips, key=lambda f: f.gap)
    assert by_gap[0].votes < by_gap[-1].votes
    # more data, same proportions: every rank holds by more votes
    doubled = GroupedCounts(models=g.models, a=g.a, b=g.b, outcome=g.outcome, count=2 * g.count)
    more = rank_robustness(fit_bt(doubled))
    assert all(m.votes > f.votes for m, f in zip(more, flips, strict=True))


def test_shown_models_and_max_pairs():
    true = np.array([1100.0, 1050.0, 1000.0, 950.0])
    g = simulate_battles(true, 4000, seed=5).grouped()
    fit = fit_bt(g)
    top = rank_robustness(fit, max_pairs=1, validate=False)
    assert len(top) == 1 and top[0].votes is None and top[0].votes_estimate is not None
    two = rank_robustness(fit, shown=["model-000", "model-002"])
    assert [(f.upper, f.lower) for f in two] == [("model-000", "model-002")]
    assert two[0].to_dict()["upper"] == "model-000"
    assert rank_robustness(fit, shown=["model-001"]) == []


def test_the_leaderboard_carries_the_robustness_numbers():
    g = simulate_battles(np.array([1100.0, 1050.0, 1000.0, 950.0]), 4000, seed=6).grouped()
    lb = compute_leaderboard(g, method="sandwich", robustness_pairs=1)
    assert len(lb.robustness) == 1
    assert lb.robustness == tuple(rank_robustness(fit_bt(g), max_pairs=1))
    assert lb.to_dict()["robustness"][0]["votes"] == lb.robustness[0].votes
    assert compute_leaderboard(g, method="sandwich").robustness == ()
