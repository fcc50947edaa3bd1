"""Tests for analysis.codearena: verdict parsing, swapped-game scoring, win rates."""

from __future__ import annotations

import math

import pytest

from analysis.codearena import (
    JudgedQuestion,
    Verdict,
    arena_hard_outcome,
    arena_hard_rates,
    arena_hard_score,
    game_outcome,
    game_score,
    parse_verdict,
    win_rates,
)

# ------------------------------------------------------------------ verdict parsing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Assistant A is much better. My final verdict is [[A>>B]].", Verdict.A_MUCH_BETTER),
        ("Final verdict: [[A>B]]", Verdict.A_BETTER),
        ("[[A=B]]", Verdict.TIE),
        ("I prefer B. [[B>A]]", Verdict.B_BETTER),
        ("[[B>>A]] because it compiles", Verdict.B_MUCH_BETTER),
        ("spaces are tolerated: [[ B >> A ]]", Verdict.B_MUCH_BETTER),
        ("repeated identical labels: [[A>B]] ... so again [[A>B]]", Verdict.A_BETTER),
    ],
)
def test_parse_verdict(text, expected):
    assert parse_verdict(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "Both answers are fine.",
        "A>B without brackets",
        "[A>B] single brackets",
        "[[A<B]] is not one of the five labels",
        "[[C>A]]",
        "conflicting: [[A>B]] then [[B>A]]",
        "conflicting strength: [[A>B]] and [[A>>B]]",
    ],
)
def test_no_or_conflicting_label_is_no_verdict(text):
    assert parse_verdict(text) is None


def test_strong_label_not_read_as_weak():
    assert parse_verdict("[[A>>B]]") is Verdict.A_MUCH_BETTER
    assert parse_verdict("[[B>>A]]") is Verdict.B_MUCH_BETTER


# ----------------------------------------------------------------- game scoring


@pytest.mark.parametrize(
    ("verdict", "as_b", "as_a"),
    [
        (Verdict.B_MUCH_BETTER, 2, -2),
        (Verdict.B_BETTER, 1, -1),
        (Verdict.TIE, 0, 0),
        (None, 0, 0),
        (Verdict.A_BETTER, -1, 1),
        (Verdict.A_MUCH_BETTER, -2, 2),
    ],
)
def test_game_score_from_the_models_side(verdict, as_b, as_a):
    assert game_score(verdict, model_position="B") == as_b
    assert game_score(verdict, model_position="A") == as_a


def test_game_score_rejects_bad_position():
    with pytest.raises(ValueError):
        game_score(Verdict.TIE, model_position="C")  # type: ignore[arg-type]


B, A = "B", "A"  # the model's position in game 1 and game 2


@pytest.mark.parametrize(
    ("game1", "game2", "wins", "ties", "score"),
    [
        # game 1: baseline is A, model is B; game 2: model is A, baseline is B
        (Verdict.B_BETTER, Verdict.A_BETTER, 2, 0, 1.0),  # model better both times
        (Verdict.B_MUCH_BETTER, Verdict.A_BETTER, 2, 0, 1.0),  # strong and weak alike
        (Verdict.B_BETTER, Verdict.B_BETTER, 1, 0, 0.5),  # split decision: half a win
        (Verdict.B_MUCH_BETTER, Verdict.B_BETTER, 1, 0, 0.5),  # strong does not outweigh weak
        (Verdict.A_BETTER, Verdict.A_BETTER, 1, 0, 0.5),  # always "A": half a win
        (Verdict.TIE, Verdict.TIE, 0, 2, 0.0),
        (Verdict.TIE, Verdict.A_MUCH_BETTER, 1, 1, 0.5),
        (None, None, 0, 0, 0.0),  # no verdict: neither won nor tied
        (None, Verdict.A_BETTER, 1, 0, 0.5),
        (Verdict.A_MUCH_BETTER, Verdict.B_MUCH_BETTER, 0, 0, 0.0),
    ],
)
def test_a_question_scores_the_games_won_out_of_two(game1, game2, wins, ties, score):
    question = JudgedQuestion(game1=game1, game2=game2)
    assert (question.wins, question.ties, question.score) == (wins, ties, score)
    assert question.outcome == ("won_none", "won_one", "won_both")[wins]


def test_game_outcomes_from_the_models_side():
    assert game_outcome(Verdict.B_MUCH_BETTER, model_position=B) == "win"
    assert game_outcome(Verdict.B_MUCH_BETTER, model_position=A) == "loss"
    assert game_outcome(Verdict.TIE, model_position=A) == "tie"
    assert game_outcome(None, model_position=B) == "no_verdict"


@pytest.mark.parametrize(
    ("game1", "game2", "summed", "outcome"),
    [
        (Verdict.B_BETTER, Verdict.A_BETTER, 2, "win"),
        (Verdict.B_MUCH_BETTER, Verdict.B_BETTER, 1, "win"),  # strong outweighs weak here
        (Verdict.B_BETTER, Verdict.B_BETTER, 0, "tie"),
        (None, Verdict.B_BETTER, -1, "loss"),
        (Verdict.A_MUCH_BETTER, Verdict.B_MUCH_BETTER, -4, "loss"),
    ],
)
def test_the_arena_hard_summed_score_is_kept_apart(game1, game2, summed, outcome):
    assert arena_hard_score(game1, game2) == summed
    assert arena_hard_outcome(summed) == outcome
    assert JudgedQuestion(game1, game2).arena_hard_score == summed


def test_from_judgments_parses_both_games():
    q = JudgedQuestion.from_judgments("... [[B>>A]]", "... [[A>B]]", category="web")
    assert (q.game1, q.game2, q.wins, q.score, q.category) == (
        Verdict.B_MUCH_BETTER,
        Verdict.A_BETTER,
        2,
        1.0,
        "web",
    )


def crafted_eleven() -> list[JudgedQuestion]:
    """The issue's crafted run: 3 clean wins, 2 clean losses, 2 split decisions, one strong
    win against a weak loss, 3 double ties."""
    return (
        [JudgedQuestion(Verdict.B_BETTER, Verdict.A_BETTER)] * 3
        + [JudgedQuestion(Verdict.A_BETTER, Verdict.B_BETTER)] * 2
        + [JudgedQuestion(Verdict.B_BETTER, Verdict.B_BETTER)] * 2
        + [JudgedQuestion(Verdict.B_MUCH_BETTER, Verdict.B_BETTER)]
        + [JudgedQuestion(Verdict.TIE, Verdict.TIE)] * 3
    )


def test_the_crafted_eleven_questions_give_the_seeds_40_9_percent():
    overall = win_rates(crafted_eleven()).overall
    # By hand: (3 x 1 + 2 x 0 + 2 x 0.5 + 0.5 + 3 x 0) / 11 = 4.5 / 11.
    assert overall.win_rate == pytest.approx(4.5 / 11)
    assert round(100 * overall.win_rate, 1) == 40.9
    # Tied games: 3 questions x 2 of 22 games.
    assert overall.tie_rate == pytest.approx(6 / 22)
    # The summed rule gave 4 wins of 11 (36.4%): the three clean wins and the strong one.
    summed = arena_hard_rates(crafted_eleven())
    assert (summed.wins, summed.ties, summed.losses) == (4, 5, 2)
    assert round(100 * summed.win_rate, 1) == 36.4


def test_an_always_a_judge_gives_fifty_percent():
    always_a = [JudgedQuestion(Verdict.A_BETTER, Verdict.A_BETTER)] * 7
    overall = win_rates(always_a).overall
    assert (overall.win_rate, overall.tie_rate) == (0.5, 0.0)
    assert arena_hard_rates(always_a).win_rate == 0.0


def test_win_rates_overall_and_per_category():
    questions = [
        JudgedQuestion(Verdict.B_BETTER, Verdict.A_BETTER, category="web"),  # 2 won
        JudgedQuestion(Verdict.B_BETTER, Verdict.B_BETTER, category="web"),  # 1 won, 1 lost
        JudgedQuestion(Verdict.A_BETTER, Verdict.B_BETTER, category="web"),  # 2 lost
        JudgedQuestion(Verdict.B_MUCH_BETTER, None, category="algo"),  # 1 won, no verdict
        JudgedQuestion(Verdict.TIE, Verdict.TIE, category="algo"),  # 2 tied
        JudgedQuestion(Verdict.B_BETTER, Verdict.TIE),  # 1 won, 1 tied; no category
    ]
    overall = win_rates(questions).overall
    assert (overall.n, overall.games_won, overall.games_tied, overall.games_lost) == (6, 5, 3, 3)
    assert overall.games_without_verdict == 1
    assert overall.win_rate == pytest.approx((1 + 0.5 + 0 + 0.5 + 0 + 0.5) / 6)
    assert overall.tie_rate == pytest.approx(3 / 12)
    assert overall.loss_rate == pytest.approx(3 / 12)
    summary = win_rates(questions)
    assert list(summary.per_category) == ["algo", "web"]
    web = summary.per_category["web"]
    assert (web.n, web.games_won, web.games_tied, web.games_lost) == (3, 3, 0, 3)
    assert web.win_rate == 0.5
    algo = summary.per_category["algo"]
    assert (algo.win_rate, algo.tie_rate) == (0.25, 0.5)


def test_win_rates_of_nothing():
    summary = win_rates([])
    assert summary.overall.n == 0 and math.isnan(summary.overall.win_rate)
    assert summary.per_category == {}
