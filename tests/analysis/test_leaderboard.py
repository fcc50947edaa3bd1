"""compute_leaderboard end to end (analysis.leaderboard)."""

import json

import numpy as np
import pytest

from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE, from_count_rows
from analysis.leaderboard import compute_leaderboard
from analysis.simulate import simulate_battles

COPILOT = {  # the published Copilot Arena board (Jan 2025), used as true ratings
    "deepseek-coder-fim": 1029.5, "claude-3-5-sonnet-20240620": 1017.7, "codestral-2405": 1000.2,
    "llama-3.1-405b-instruct": 986.8, "gemini-1.5-pro-002": 982.4, "gpt-4o-2024-08-06": 982.4,
    "gemini-1.5-flash-002": 981.3, "llama-3.1-70b-instruct": 970.6, "gpt-4o-2024-11-20": 965.9,
    "qwen-2.5-coder-32b-instruct": 951.3, "gpt-4o-mini-2024-07-18": 940.7,
}  # fmt: skip


def _json_roundtrip(lb):
    text = json.dumps(lb.to_dict(), allow_nan=False)  # raises on NaN / inf
    return json.loads(text)


@pytest.mark.parametrize("method", ["bootstrap", "sandwich"])
def test_anchored_board_like_copilot_arena(method):
    g = simulate_battles(COPILOT, 21_000, top_slot_p=0.5, seed=1).grouped()
    lb = compute_leaderboard(g, method=method, rounds=500, anchor="codestral-2405")
    i = g.index("codestral-2405")
    # as on the published board, the anchor is exactly 1000 but keeps an interval of its own
    assert lb.rating[i] == 1000.0 and lb.ci_lower[i] < 1000.0 < lb.ci_upper[i]
    assert 8.0 < lb.ci_upper[i] - lb.ci_lower[i] < 40.0
    # ... and the ranks are those of the mean-normalised board
    plain = compute_leaderboard(g, method=method, rounds=500)
    assert np.array_equal(lb.rank, plain.rank)
    pinned = compute_leaderboard(
        g, method=method, rounds=500, anchor="codestral-2405", anchor_mode="per_round"
    )
    assert pinned.ci_lower[i] == 1000.0 == pinned.ci_upper[i] and pinned.rating[i] == 1000.0
    assert lb.anchor_applied and lb.total_battles == 21_000
    assert lb.status == ("ok",) * len(COPILOT)
    assert np.all(lb.ci_lower <= lb.rating) and np.all(lb.rating <= lb.ci_upper)
    assert lb.votes.sum() == 2 * 21_000
    assert lb.rank.min() == 1 and np.all(lb.rank >= 1)
    best = int(np.argmax(lb.rating))
    assert lb.rank[best] == 1
    assert lb.rounds == (500 if method == "bootstrap" else 0)
    if method == "sandwich":
        assert np.array_equal(lb.median, lb.rating)
    d = _json_roundtrip(lb)
    assert d["models"] == list(COPILOT) and d["anchor"] == "codestral-2405"
    assert len(d["win_fraction"]) == len(COPILOT) and d["win_fraction"][0][0] is None
    table = lb.table()
    assert [r["rating"] for r in table] == sorted(lb.rating.tolist(), reverse=True)


def test_matrices_and_average_win_rates_are_consistent():
    g = simulate_battles(COPILOT, 50_000, tie_rate=0.1, seed=2).grouped()
    lb = compute_leaderboard(g, method="sandwich")
    assert np.array_equal(lb.battle_count, lb.battle_count.T)
    off = ~np.eye(len(COPILOT), dtype=bool)
    assert np.allclose((lb.predicted_win_rate + lb.predicted_win_rate.T)[off], 1.0)
    # observed and predicted win rates agree where there are many battles
    assert np.nanmax(np.abs(lb.win_fraction - lb.predicted_win_rate)) < 0.08
    assert np.allclose(lb.avg_win_rate, np.nanmean(lb.predicted_win_rate, axis=1))
    assert np.argmax(lb.avg_win_rate) == np.argmax(lb.rating)


def test_edge_cases_are_json_safe_and_unranked_where_unrated():
    rows = [
        ("a", "b", OUTCOME_A, 30), ("a", "b", OUTCOME_B, 20), ("b", "c", OUTCOME_A, 25),
        ("b", "c", OUTCOME_B, 25), ("c", "a", OUTCOME_A, 15), ("c", "a", OUTCOME_B, 30),
        ("top", "a", OUTCOME_A, 3), ("p", "q", OUTCOME_TIE, 2),
    ]  # fmt: skip
    g = from_count_rows(rows, models=["a", "b", "c", "top", "p", "q", "idle"])
    for method in ("bootstrap", "sandwich"):
        lb = compute_leaderboard(g, method=method, rounds=200)
        d = _json_roundtrip(lb)
        assert d["status"] == [
            "ok",
            "ok",
            "ok",
            "unbounded_high",
            "disconnected",
            "disconnected",
            "no_battles",
        ]
        assert d["rank"][4:] == [None, None, None] and all(r is not None for r in d["rank"][:3])
        assert d["rating"][4:] == [None, None, None] and d["votes"][4:] == [2, 2, 0]
        assert all(v is not None for v in d["ci_upper"][:3])
        # three wins, no loss: no upper bound, so no rank from the virtual tie
        assert d["ci_upper"][3] is None and d["ci_lower"][3] is not None and d["rank"][3] is None
        assert d["predicted_win_rate"][0][4] is None and d["battle_count"][4][5] == 2
        assert d["diagnostics"]["ford_condition"] is False


@pytest.mark.parametrize("models", [(), ("solo",), ("x", "y")])
def test_no_battles(models):
    lb = compute_leaderboard(
        from_count_rows([], models=models), anchor=models[0] if models else None
    )
    d = _json_roundtrip(lb)
    assert d["status"] == ["no_battles"] * len(models) and d["total_battles"] == 0
    assert d["rank"] == [None] * len(models) and not lb.anchor_applied


def test_bad_arguments():
    g = simulate_battles(COPILOT, 1000, seed=0).grouped()
    with pytest.raises(ValueError):
        compute_leaderboard(g, method="elo")
    with pytest.raises(ValueError):
        compute_leaderboard(g, anchor="unknown")


def test_same_seed_same_board():
    g = simulate_battles(COPILOT, 5000, seed=3).grouped()
    a = compute_leaderboard(g, rounds=200, seed=9).to_dict()
    b = compute_leaderboard(g, rounds=200, seed=9).to_dict()
    assert a == b


# ------------------------------------------------------------------ position bias
TRUE = np.linspace(850.0, 1150.0, 8)


def _relative_width(lb):
    return np.mean(lb.ci_upper - lb.ci_lower) / np.std(lb.rating)


def test_plain_and_position_aware_agree_when_bias_is_mild():
    g = simulate_battles(TRUE, 40_000, tie_rate=0.05, top_slot_p=0.55, seed=4).grouped()
    plain = compute_leaderboard(g, method="sandwich")
    aware = compute_leaderboard(g, method="sandwich", position_bias=True)
    width = np.mean(aware.ci_upper - aware.ci_lower)
    assert np.max(np.abs(plain.rating - aware.rating)) < 0.25 * width
    assert np.array_equal(np.argsort(plain.rating), np.argsort(aware.rating))
    assert (
        abs(aware.top_slot.p - 0.55) < 0.01 and aware.top_slot.lower < 0.55 < aware.top_slot.upper
    )
    assert plain.top_slot is None and _json_roundtrip(aware)["top_slot"]["p"] == aware.top_slot.p


def test_plain_fit_is_the_position_aware_fit_compressed():
    # With a top-slot advantage, averaging over random positions pulls every win rate
    # towards 1/2: the plain scale shrinks by about 4 p (1 - p) (logit non-collapsibility).
    for p_top, lo, hi in ((0.6, 0.93, 0.99), (0.82, 0.55, 0.67)):
        g = simulate_battles(TRUE, 40_000, tie_rate=0.05, top_slot_p=p_top, seed=6).grouped()
        plain = compute_leaderboard(g, method="sandwich").rating - 1000.0
        board = compute_leaderboard(g, method="sandwich", position_bias=True)
        aware = board.rating - 1000.0
        slope = float(plain @ aware / (aware @ aware))
        assert lo < slope < hi, (p_top, slope)
        # once rescaled, the two agree to well within the intervals
        width = np.mean(board.ci_upper - board.ci_lower)
        assert np.max(np.abs(plain - slope * aware)) < 0.3 * width


@pytest.mark.parametrize("method", ["bootstrap", "sandwich"])
def test_position_aware_fit_resolves_models_better_under_strong_bias(method):
    g = simulate_battles(TRUE, 40_000, tie_rate=0.05, top_slot_p=0.82, seed=5).grouped()
    plain = compute_leaderboard(g, method=method, rounds=500)
    aware = compute_leaderboard(g, method=method, rounds=500, position_bias=True)
    # relative to the spread of the ratings, the position-aware intervals are ~20% tighter ...
    gain = 1 - _relative_width(aware) / _relative_width(plain)
    assert 0.12 < gain < 0.32, gain
    # ... while in raw points they are wider, because the plain scale is compressed
    assert np.mean(aware.ci_upper - aware.ci_lower) > np.mean(plain.ci_upper - plain.ci_lower)
    truth = TRUE - TRUE.mean() + 1000.0
    covered = (aware.ci_lower <= truth) & (truth <= aware.ci_upper)
    assert covered.sum() >= 6
    assert np.sum((plain.ci_lower <= truth) & (truth <= plain.ci_upper)) <= 4
