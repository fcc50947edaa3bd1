"""Bradley-Terry fit (analysis.bradley_terry): independent implementations, invariances, edge cases."""

import choix
import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from analysis.bradley_terry import fit_bt
from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE, GroupedCounts, from_count_rows
from analysis.intervals import sandwich
from analysis.scale import SCALE
from analysis.simulate import simulate_battles

TRUE = np.array([1120.0, 1060.0, 1010.0, 1000.0, 985.0, 940.0, 900.0, 860.0])


@pytest.fixture(scope="module")
def small():
    return simulate_battles(TRUE, 3000, tie_rate=0.15, top_slot_p=0.7, seed=11).grouped()


def _mean_1000(theta):
    return 1000.0 + SCALE * (theta - theta.mean())


def test_matches_choix_within_a_hundredth_of_a_point(small):
    fit = fit_bt(small)
    # choix has no ties or weights: doubling every battle, a win is two wins and a tie is one
    # win each way, which gives exactly the ties-as-half-wins likelihood (times two).
    data = []
    for a, b, o, c in zip(small.a, small.b, small.outcome, small.count, strict=True):
        winner, loser = (a, b) if o == OUTCOME_A else (b, a)
        pairs = [(a, b), (b, a)] if o == OUTCOME_TIE else [(winner, loser)] * 2
        data.extend(pairs * int(c))
    theta = choix.ilsr_pairwise(len(TRUE), data, tol=1e-12, max_iter=10_000)
    assert np.max(np.abs(_mean_1000(theta) - fit.rating)) < 0.01


def test_matches_per_battle_logistic_regression(small):
    fit = fit_bt(small, anchor=small.models[3])
    # one row per battle, y = 1 / 0.5 / 0 for the top model, model 3 fixed at 0
    a = np.repeat(small.a, small.count)
    b = np.repeat(small.b, small.count)
    y = np.repeat(
        np.select([small.outcome == OUTCOME_A, small.outcome == OUTCOME_B], [1.0, 0.0], 0.5),
        small.count,
    )
    free = np.array([i for i in range(len(TRUE)) if i != 3])

    def nll(x):
        theta = np.zeros(len(TRUE))
        theta[free] = x
        z = theta[a] - theta[b]
        loss = -(y * log_expit(z) + (1 - y) * log_expit(-z)).sum()
        r = y - expit(z)
        grad = np.zeros(len(TRUE))
        np.add.at(grad, a, -r)
        np.add.at(grad, b, r)
        return loss, grad[free]

    res = minimize(nll, np.zeros(len(free)), jac=True, method="BFGS", options={"gtol": 1e-10})
    theta = np.zeros(len(TRUE))
    theta[free] = res.x
    assert np.max(np.abs(1000.0 + SCALE * theta - fit.rating)) < 0.01


def test_converges_below_gradient_tolerance(small):
    for position_bias in (False, True):
        fit = fit_bt(small, position_bias=position_bias)
        assert fit.converged and fit.gradient_norm < 1e-8
        assert 1 <= fit.iterations <= 15


def test_anchor_and_mean_hold_exactly(small):
    fit = fit_bt(small, anchor="model-002", anchor_value=1234.5)
    assert fit.rating[2] == 1234.5 and fit.anchor_applied
    plain = fit_bt(small)
    assert abs(plain.rating.mean() - 1000.0) < 1e-9
    # the anchor only shifts the scale
    assert np.allclose(fit.rating - fit.rating[2], plain.rating - plain.rating[2], atol=1e-9)
    with pytest.raises(ValueError):
        fit_bt(small, anchor="no-such-model")


def _swapped(g: GroupedCounts) -> GroupedCounts:
    flip = np.array([OUTCOME_B, OUTCOME_A, OUTCOME_TIE])
    return GroupedCounts(models=g.models, a=g.b, b=g.a, outcome=flip[g.outcome], count=g.count)


def test_swapping_sides_changes_nothing(small):
    fit, fit_s = fit_bt(small), fit_bt(_swapped(small))
    assert np.allclose(fit.rating, fit_s.rating, atol=1e-9, rtol=0)
    aware, aware_s = fit_bt(small, position_bias=True), fit_bt(_swapped(small), position_bias=True)
    assert np.allclose(aware.rating, aware_s.rating, atol=1e-9, rtol=0)
    # the swapped table puts every battle in the other slot: the top-slot advantage flips
    assert abs(aware.top_slot_log_odds + aware_s.top_slot_log_odds) < 1e-9


def test_doubling_counts_leaves_ratings_unchanged(small):
    doubled = GroupedCounts(
        models=small.models, a=small.a, b=small.b, outcome=small.outcome, count=2 * small.count
    )
    for position_bias in (False, True):
        assert np.allclose(
            fit_bt(small, position_bias=position_bias).rating,
            fit_bt(doubled, position_bias=position_bias).rating,
            atol=1e-9,
            rtol=0,
        )


def test_recovers_known_ratings_and_top_slot():
    g = simulate_battles(TRUE, 200_000, tie_rate=0.1, top_slot_p=0.82, seed=5).grouped()
    truth = TRUE - TRUE.mean() + 1000.0
    aware = fit_bt(g, position_bias=True)
    se = sandwich(aware).sd
    assert np.all(np.abs(aware.rating - truth) < 4 * se)
    assert abs(aware.top_slot_p - 0.82) < 0.005
    # the plain fit is compressed by the top-slot noise (logit non-collapsibility) ...
    plain = fit_bt(g)
    slope = np.polyfit(truth, plain.rating, 1)[0]
    assert 0.55 < slope < 0.67  # ~ 4 p (1 - p) = 0.59 for small rating gaps at p = 0.82
    # ... but orders the models the same way
    assert np.array_equal(np.argsort(plain.rating), np.argsort(aware.rating))


def test_position_bias_needs_known_positions(small):
    blind = GroupedCounts(
        models=small.models,
        a=small.a,
        b=small.b,
        outcome=small.outcome,
        count=small.count,
        positions_known=False,
    )
    with pytest.raises(ValueError):
        fit_bt(blind, position_bias=True)
    assert np.allclose(fit_bt(blind).rating, fit_bt(small).rating)


# ----------------------------------------------------------------------------- edge cases
CORE_ROWS = [
    ("a", "b", OUTCOME_A, 30), ("a", "b", OUTCOME_B, 20), ("b", "c", OUTCOME_A, 25),
    ("b", "c", OUTCOME_B, 25), ("c", "a", OUTCOME_A, 15), ("c", "a", OUTCOME_B, 30),
    ("a", "b", OUTCOME_TIE, 5),
]  # fmt: skip


def test_only_wins_and_only_losses_are_finite_and_flagged():
    rows = [*CORE_ROWS, ("top", "a", OUTCOME_A, 4), ("c", "top", OUTCOME_B, 3),
            ("bottom", "c", OUTCOME_B, 5), ("a", "bottom", OUTCOME_A, 2)]  # fmt: skip
    g = from_count_rows(rows)
    fit = fit_bt(g)
    status = dict(zip(g.models, fit.status, strict=True))
    assert status == {
        "a": "ok",
        "b": "ok",
        "c": "ok",
        "top": "unbounded_high",
        "bottom": "unbounded_low",
    }
    r = dict(zip(g.models, fit.rating, strict=True))
    assert np.all(np.isfinite(fit.rating)) and fit.converged
    assert r["top"] > max(r["a"], r["b"], r["c"]) + 150
    assert r["bottom"] < min(r["a"], r["b"], r["c"]) - 150
    assert not fit.structure.ford_condition
    # more evidence pushes an unbounded model further out, but it stays finite
    more = from_count_rows([*rows, ("top", "b", OUTCOME_A, 40)])
    assert fit_bt(more).rating[more.index("top")] > r["top"]
    # the core barely notices: it moves by much less than its own uncertainty
    core_only = fit_bt(from_count_rows(CORE_ROWS, models=g.models))
    core = [g.index(m) for m in "abc"]
    shift = (fit.rating[core] - fit.rating[core].mean()) - (
        core_only.rating[core] - core_only.rating[core].mean()
    )
    assert np.max(np.abs(shift)) < 0.25 * np.min(sandwich(core_only).sd[core])


def test_split_graph_rates_the_main_part_only():
    rows = [*CORE_ROWS, ("p", "q", OUTCOME_A, 3), ("p", "q", OUTCOME_B, 2)]
    g = from_count_rows(rows, models=["a", "b", "c", "p", "q", "idle"])
    fit = fit_bt(g, anchor="p")
    assert fit.status == ("ok", "ok", "ok", "disconnected", "disconnected", "no_battles")
    assert np.all(np.isnan(fit.rating[3:])) and np.all(np.isfinite(fit.rating[:3]))
    # the anchor is not rated here: ratings fall back to the mean
    assert not fit.anchor_applied and abs(np.mean(fit.rating[:3]) - 1000.0) < 1e-9


def test_one_battle():
    win = fit_bt(from_count_rows([*CORE_ROWS, ("new", "b", OUTCOME_A, 1)]))
    i = win.models.index("new")
    assert win.status[i] == "unbounded_high" and np.isfinite(win.rating[i])
    tie = fit_bt(from_count_rows([*CORE_ROWS, ("new", "b", OUTCOME_TIE, 1)]))
    j = tie.models.index("new")
    assert tie.status[j] == "ok"  # a tie is a win both ways: Ford's condition holds
    assert abs(tie.rating[j] - tie.rating[tie.models.index("b")]) < 1e-6


def test_two_models_one_battle_and_no_core():
    fit = fit_bt(from_count_rows([("x", "y", OUTCOME_A, 1)]))
    assert fit.status == ("unbounded", "unbounded")
    assert fit.rating[0] > 1000.0 > fit.rating[1]
    assert abs(fit.rating[0] + fit.rating[1] - 2000.0) < 1e-9


@pytest.mark.parametrize("models", [(), ("solo",), ("a", "b", "c")])
def test_zero_battles_and_single_model(models):
    fit = fit_bt(from_count_rows([], models=models))
    assert fit.status == ("no_battles",) * len(models)
    assert np.all(np.isnan(fit.rating)) and fit.converged
    assert fit.rating.shape == (len(models),)
