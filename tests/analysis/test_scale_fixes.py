"""Issue 16 fixes: the scale is held by the shown models, labels say what was applied, seeded
bootstraps do not depend on the model order, unbounded models get honest intervals."""

import numpy as np
import pytest
from scipy.special import expit

from analysis.bradley_terry import fit_bt
from analysis.grouping import OUTCOME_A, OUTCOME_B, GroupedCounts
from analysis.intervals import bootstrap, sandwich
from analysis.leaderboard import compute_leaderboard
from analysis.ranks import rank_ub
from analysis.scale import SCALE
from analysis.simulate import simulate_battles

COPILOT = np.array([1029.5, 1017.7, 1000.2, 986.8, 982.4, 982.4, 981.3, 970.6, 965.9, 951.3])


@pytest.fixture(scope="module")
def board():
    return simulate_battles(COPILOT, 21_000, seed=3).grouped()


def _with_extra(g: GroupedCounts, name: str, wins: int, losses: int, seed: int) -> GroupedCounts:
    """``g`` plus one model with ``wins`` / ``losses`` against random opponents, random slot."""
    rng = np.random.default_rng(seed)
    k = g.n_models
    n = wins + losses
    opp = rng.integers(0, k, size=n)
    new_on_top = rng.random(n) < 0.5
    new_won = np.arange(n) < wins
    a = np.where(new_on_top, k, opp)
    b = np.where(new_on_top, opp, k)
    outcome = np.where(new_won == new_on_top, OUTCOME_A, OUTCOME_B)
    return GroupedCounts(
        models=(*g.models, name),
        a=np.concatenate([g.a, a]),
        b=np.concatenate([g.b, b]),
        outcome=np.concatenate([g.outcome, outcome]),
        count=np.concatenate([g.count, np.ones(n, dtype=np.int64)]),
    )


@pytest.mark.parametrize("method", ["bootstrap", "sandwich"])
def test_a_model_with_40_straight_losses_does_not_move_the_shown_board(board, method):
    shown = list(board.models)
    before = compute_leaderboard(board, method=method, rounds=300, shown=shown)
    broken = _with_extra(board, "empty-endpoint", wins=0, losses=40, seed=1)
    after = compute_leaderboard(broken, method=method, rounds=300, shown=shown)
    assert after.status[-1] == "unbounded_low"
    k = board.n_models
    assert np.max(np.abs(after.rating[:k] - before.rating)) < 0.5
    assert abs(after.rating[:k].mean() - 1000.0) < 1e-9
    # also without telling it what is shown: unbounded models never hold the scale
    default = compute_leaderboard(broken, method=method, rounds=300)
    assert np.max(np.abs(default.rating[:k] - before.rating)) < 0.5
    assert "empty-endpoint" not in default.reference and len(default.reference) == k


def test_only_the_shown_models_hold_the_mean(board):
    shown = np.zeros(board.n_models, dtype=bool)
    shown[:6] = True
    fit = fit_bt(board, shown=shown)
    assert abs(fit.rating[:6].mean() - 1000.0) < 1e-9
    assert fit.reference_models == board.models[:6]
    assert fit.scale_label == "mean of the 6 shown models held at 1000"
    # a fixed reference set: adding models the reference does not contain moves nothing
    extra = _with_extra(board, "late", wins=300, losses=200, seed=2)
    fixed = fit_bt(extra, shown=list(board.models[:6]))
    assert abs(fixed.rating[:6].mean() - 1000.0) < 1e-9
    # both sandwich and bootstrap intervals are centred on this scale
    for iv in (sandwich(fit), bootstrap(fit, rounds=200, seed=0)):
        assert np.all(iv.lower < fit.rating) and np.all(fit.rating < iv.upper)


def test_labels_say_what_holds_the_scale(board):
    anchored = compute_leaderboard(board, method="sandwich", anchor="model-002")
    assert anchored.scale_label == (
        "model-002 held at 1000 (intervals: distance from the shown models' average)"
    )
    assert anchored.anchor_applied
    pinned = fit_bt(board, anchor="model-002", anchor_mode="per_round")
    assert pinned.scale_label == "model-002 held at 1000 in every bootstrap round"
    # a slice where the anchor is not rated falls back to the mean and says so
    unrated = GroupedCounts(
        models=(*board.models, "codestral-2405"),
        a=board.a,
        b=board.b,
        outcome=board.outcome,
        count=board.count,
    )
    lb = compute_leaderboard(
        unrated, method="sandwich", anchor="codestral-2405", shown=list(unrated.models)
    )
    assert not lb.anchor_applied
    assert lb.scale_label == (
        "mean of the 10 shown models held at 1000 (codestral-2405 is not rated here)"
    )
    assert lb.to_dict()["scale_label"] == lb.scale_label
    # an anchor that is rated but unbounded (only wins) cannot hold the scale either
    lucky = _with_extra(board, "lucky", wins=12, losses=0, seed=4)
    fit = fit_bt(lucky, anchor="lucky")
    assert not fit.anchor_applied and fit.scale_label.endswith("(lucky is not rated here)")


def _permuted(g: GroupedCounts, perm: np.ndarray) -> GroupedCounts:
    """The same battles with the models listed in another order (model perm[i] goes first)."""
    where = np.argsort(perm)
    return GroupedCounts(
        models=tuple(g.models[i] for i in perm),
        a=where[g.a],
        b=where[g.b],
        outcome=g.outcome,
        count=g.count,
        user=g.user,
    )


@pytest.mark.parametrize("position_bias", [False, True])
def test_seeded_bootstrap_does_not_depend_on_the_model_order(position_bias):
    sim = simulate_battles(COPILOT, 6000, tie_rate=0.1, top_slot_p=0.7, seed=9)
    users = np.random.default_rng(0).integers(0, 40, size=len(sim))
    g = GroupedCounts(
        models=sim.models,
        a=sim.a,
        b=sim.b,
        outcome=sim.outcome,
        count=np.ones(len(sim)),
        user=users,
    )
    perm = np.random.default_rng(1).permutation(g.n_models)
    gp = _permuted(g, perm)
    for clustered in (False, True):
        b1 = bootstrap(
            fit_bt(g, position_bias=position_bias), rounds=300, seed=7, clustered=clustered
        )
        b2 = bootstrap(
            fit_bt(gp, position_bias=position_bias), rounds=300, seed=7, clustered=clustered
        )
        assert np.allclose(b1.lower[perm], b2.lower, atol=1e-8, rtol=0)
        assert np.allclose(b1.upper[perm], b2.upper, atol=1e-8, rtol=0)
        assert np.allclose(b1.samples[:, perm], b2.samples, atol=1e-8, rtol=0)


@pytest.mark.parametrize("method", ["bootstrap", "sandwich"])
def test_twelve_straight_wins_give_no_upper_bound_and_no_rank(board, method):
    lucky = _with_extra(board, "lucky", wins=12, losses=0, seed=5)
    lb = compute_leaderboard(lucky, method=method, rounds=300)
    i = lucky.index("lucky")
    assert lb.status[i] == "unbounded_high"
    assert lb.ci_upper[i] == np.inf and lb.rank[i] == 0
    assert lb.to_dict()["ci_upper"][i] is None and lb.to_dict()["rank"][i] is None
    # the lower bound is the data's: 12 straight wins are a 2.5% event at that rating
    # (well below the virtual tie's), and it counts against the models it is surely above
    fit = fit_bt(lucky)
    k = board.n_models
    prob = fit.problem
    mine = (prob.pi == k) | (prob.pj == k)
    others = fit.theta[np.where(prob.pi[mine] == k, prob.pj[mine], prob.pi[mine])]
    t = (lb.ci_lower[i] - fit.rating[i]) / SCALE + fit.theta[k]
    n, _ = prob.full_stats()
    p_run = np.prod(expit(t - others) ** n[mine, 0])
    assert abs(p_run - 0.025) < 1e-6
    assert lb.ci_lower[i] < lb.rating[i] - 150
    surely_below = lb.ci_upper[:k] < lb.ci_lower[i]
    assert np.array_equal(lb.rank[:k], rank_ub(lb.ci_lower[:k], lb.ci_upper[:k]) + surely_below)


@pytest.mark.slow
def test_shifted_anchor_intervals_measure_distance_from_the_average():
    # What the methodology page says of the "shift" anchor: the intervals cover each model's
    # distance from the shown models' average (moved by the board's constant), not its
    # distance from the anchor.
    hits_mean = hits_anchor = total = 0
    anchor = 2
    for seed in range(150):
        g = simulate_battles(COPILOT, 3000, seed=seed).grouped()
        lb = compute_leaderboard(g, method="sandwich", anchor=g.models[anchor], clustered=False)
        # the board's constant: its average sits where the anchor put it
        mean_truth = COPILOT - COPILOT.mean() + lb.rating.mean()
        anchor_truth = 1000.0 + COPILOT - COPILOT[anchor]
        others = np.arange(len(COPILOT)) != anchor
        hits_mean += int(
            np.sum(((lb.ci_lower <= mean_truth) & (mean_truth <= lb.ci_upper))[others])
        )
        hits_anchor += int(
            np.sum(((lb.ci_lower <= anchor_truth) & (anchor_truth <= lb.ci_upper))[others])
        )
        total += int(others.sum())
    assert 0.93 <= hits_mean / total <= 0.97, hits_mean / total
    assert hits_anchor / total < 0.88, hits_anchor / total
