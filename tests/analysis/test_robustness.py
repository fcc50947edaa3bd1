"""Robustness of places (analysis.robustness): the counts against exhaustive enumeration of
removals on small arenas, every challenger (not only the runner-up), bounds and the board."""

import numpy as np
import pytest

from analysis.bradley_terry import fit_bt
from analysis.grouping import OUTCOME_A, OUTCOME_B, GroupedCounts, from_count_rows
from analysis.leaderboard import compute_leaderboard
from analysis.robustness import hold, place_robustness
from analysis.simulate import simulate_battles
from tests.analysis.robustness_exact import LIMIT, count_vectors, exact_minimum, small_arena


def test_small_arenas_match_exhaustive_enumeration():
    # Every count is a real removal set checked by a refit, so it is never below the minimum;
    # here it is the minimum, and "none found" means none of up to LIMIT votes exists.
    # benchmarks/bench_statistics_checks.py runs 400 such arenas.
    rng = np.random.default_rng(2024)
    checked = found = 0
    while checked < 60:
        fit = fit_bt(small_arena(rng))
        holds = place_robustness(fit, places=1, max_votes=LIMIT)
        if not holds:
            continue
        first = holds[0]
        below = [
            m for m in fit.models if m != first.upper and fit.status[fit.models.index(m)] == "ok"
        ]
        room = np.maximum(fit.problem.cat_count - 1, 0)
        bound = first.votes - 1 if first.votes else LIMIT
        if count_vectors(room, bound) > 50_000:
            continue
        checked += 1
        assert exact_minimum(fit, first.upper, below, bound) is None, first
        if first.votes is not None:
            found += 1
            assert exact_minimum(fit, first.upper, below, first.votes) == first.votes
        else:
            assert first.searched == min(LIMIT, int(room.sum()))
    assert found >= 40  # most small arenas' #1 falls to a few removals


def _runner_up_is_not_the_weak_spot() -> GroupedCounts:
    # top beats second often and clearly; third has a few lucky wins against the top and
    # little else, so lifting the third above the top takes fewer removals
    rows = [
        ("top", "second", OUTCOME_A, 60),
        ("top", "second", OUTCOME_B, 40),
        ("top", "third", OUTCOME_A, 6),
        ("top", "third", OUTCOME_B, 4),
        ("second", "third", OUTCOME_A, 40),
        ("second", "third", OUTCOME_B, 32),
    ]
    return from_count_rows(rows)


def test_the_weakest_challenger_is_found_even_below_the_runner_up():
    fit = fit_bt(_runner_up_is_not_the_weak_spot())
    order = [fit.models[i] for i in np.argsort(-fit.rating)]
    assert order == ["top", "second", "third"]
    against_second = hold(fit, "top", below=["second"])
    anyone = hold(fit, "top", below=["second", "third"])
    assert anyone.challenger == "third"
    assert anyone.votes is not None and against_second.votes is not None
    assert anyone.votes < against_second.votes
    rating = dict(zip(fit.models, fit.rating, strict=True))
    assert anyone.gap == pytest.approx(rating["top"] - rating["second"])


def test_larger_arena():
    true = np.array([1060.0, 1040.0, 1000.0, 990.0, 950.0])
    g = simulate_battles(true, 8000, tie_rate=0.1, seed=4).grouped()
    fit = fit_bt(g)
    holds = place_robustness(fit, places=3)
    ranked = [fit.models[i] for i in np.argsort(-fit.rating)]
    assert [h.upper for h in holds] == ranked[:3]
    for k, h in enumerate(holds):
        assert h.votes is not None and 0 < h.votes < g.total
        assert h.challenger in ranked[k + 1 :]
        assert h.gap > 0
    # more data, same proportions: every place holds by more votes
    doubled = GroupedCounts(models=g.models, a=g.a, b=g.b, outcome=g.outcome, count=2 * g.count)
    more = place_robustness(fit_bt(doubled), places=3)
    assert all(m.votes > h.votes for m, h in zip(more, holds, strict=True))


def test_a_bounded_search_says_how_far_it_looked():
    g = simulate_battles(np.array([1200.0, 1000.0, 950.0]), 3000, seed=8).grouped()
    first = place_robustness(fit_bt(g), places=1, max_votes=5)[0]
    assert first.votes is None and first.challenger is None and first.searched == 5
    assert first.to_dict() == {
        "upper": "model-000",
        "challenger": None,
        "gap": first.gap,
        "votes": None,
        "searched": 5,
    }


def test_shown_models_and_places():
    true = np.array([1100.0, 1050.0, 1000.0, 950.0])
    fit = fit_bt(simulate_battles(true, 4000, seed=5).grouped())
    two = place_robustness(fit, shown=["model-000", "model-002"], places=3)
    assert [(h.upper, h.challenger) for h in two] == [("model-000", "model-002")]
    assert place_robustness(fit, shown=["model-001"], places=3) == []


def test_the_leaderboard_carries_the_robustness_numbers():
    g = simulate_battles(np.array([1100.0, 1050.0, 1000.0, 950.0]), 4000, seed=6).grouped()
    lb = compute_leaderboard(g, method="sandwich", robustness_places=1)
    assert len(lb.robustness) == 1
    assert lb.robustness == tuple(place_robustness(fit_bt(g), places=1))
    assert lb.to_dict()["robustness"][0]["votes"] == lb.robustness[0].votes
    assert compute_leaderboard(g, method="sandwich").robustness == ()
