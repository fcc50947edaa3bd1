"""Tests for analysis.codearena: verdict parsing, swapped-game scoring, win rates, pass@k,
EvalPlus and MultiPL-E result scoring."""

from __future__ import annotations

import gzip
import json
import math
from math import comb

import pytest

from analysis.codearena import (
    JudgedQuestion,
    Verdict,
    arena_hard_outcome,
    arena_hard_rates,
    arena_hard_score,
    game_outcome,
    game_score,
    greedy_pass_at_1,
    load_multiple_results,
    mean_pass_at_k,
    multiple_completion_passes,
    parse_verdict,
    pass_at_k,
    score_evalplus,
    score_multiple,
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


# ------------------------------------------------------------------------ pass@k


def binomial_pass_at_k(n: int, c: int, k: int) -> float:
    return 1.0 - comb(n - c, k) / comb(n, k)


@pytest.mark.parametrize(
    ("n", "c", "k"),
    [
        (1, 0, 1),
        (1, 1, 1),
        (10, 3, 1),
        (10, 3, 5),
        (20, 0, 10),
        (20, 20, 10),
        (200, 17, 10),
        (200, 1, 100),
    ],
)
def test_pass_at_k_equals_binomial_formula(n, c, k):
    assert pass_at_k(n, c, k) == pytest.approx(binomial_pass_at_k(n, c, k), abs=1e-12)


def test_pass_at_1_is_fraction_correct():
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)


def test_pass_at_k_is_one_when_too_few_wrong_samples():
    # n - c < k: every k-subset contains a correct sample.
    assert pass_at_k(10, 8, 3) == 1.0
    assert pass_at_k(5, 5, 1) == 1.0


def test_pass_at_k_is_stable_for_huge_n():
    # C(100000, 5000) overflows floats; the product form does not.
    value = pass_at_k(100_000, 10, 5_000)
    assert 0.0 < value < 1.0
    assert value == pytest.approx(1 - (1 - 5_000 / 100_000) ** 10, rel=1e-3)


@pytest.mark.parametrize(
    ("n", "c", "k", "error"),
    [
        (0, 0, 1, ValueError),
        (5, 6, 1, ValueError),
        (5, -1, 1, ValueError),
        (5, 2, 0, ValueError),
        (5, 2, 6, ValueError),
        (5.0, 2, 1, TypeError),
        (5, True, 1, TypeError),
    ],
)
def test_pass_at_k_rejects_bad_input(n, c, k, error):
    with pytest.raises(error):
        pass_at_k(n, c, k)


def test_mean_pass_at_k_and_greedy():
    assert mean_pass_at_k([(10, 3), (10, 0), (10, 10)], k=1) == pytest.approx((0.3 + 0 + 1) / 3)
    assert greedy_pass_at_1([True, False, True, True]) == 0.75
    with pytest.raises(ValueError):
        mean_pass_at_k([], k=1)
    with pytest.raises(ValueError):
        greedy_pass_at_1([])


# ----------------------------------------------------------------------- EvalPlus


def evalplus_file(samples: dict[str, list[tuple[str, str | None]]]) -> dict:
    return {
        "date": "2024-12-01 10:00",
        "hash": "abc123",
        "eval": {
            task_id: [
                {"task_id": task_id, "solution": "def f(): ...", "base_status": b, "plus_status": p,
                 "base_fail_tests": [], "plus_fail_tests": []}
                for b, p in pairs
            ]
            for task_id, pairs in samples.items()
        },
    }  # fmt: skip


def test_evalplus_plus_needs_base_and_plus_pass():
    data = evalplus_file(
        {
            "HumanEval/0": [("pass", "pass")],
            "HumanEval/1": [("pass", "fail")],
            "HumanEval/2": [("fail", "pass")],  # plus pass alone does not count
            "HumanEval/3": [("timeout", "timeout")],
        }
    )
    score = score_evalplus(data)
    assert score.n_tasks == 4
    assert score.base_pass_at_k == pytest.approx(2 / 4)
    assert score.plus_pass_at_k == pytest.approx(1 / 4)
    assert score.plus["HumanEval/2"].correct == 0


def test_evalplus_multiple_samples_and_pass_at_k(tmp_path):
    data = evalplus_file(
        {
            "Mbpp/2": [("pass", "pass"), ("pass", "fail"), ("fail", "fail"), ("pass", "pass")],
            "Mbpp/3": [("fail", "fail")] * 4,
        }
    )
    path = tmp_path / "eval_results.json"
    path.write_text(json.dumps(data))
    score = score_evalplus(path, k=2)
    assert score.base["Mbpp/2"].correct == 3 and score.plus["Mbpp/2"].correct == 2
    assert score.base_pass_at_k == pytest.approx((binomial_pass_at_k(4, 3, 2) + 0) / 2)
    assert score.plus_pass_at_k == pytest.approx((binomial_pass_at_k(4, 2, 2) + 0) / 2)
    # The "eval" part alone is accepted too.
    assert score_evalplus(data["eval"], k=2) == score


def test_evalplus_missing_plus_status_is_not_plus_correct():
    score = score_evalplus(evalplus_file({"HumanEval/0": [("pass", None)]}))
    assert (score.base_pass_at_k, score.plus_pass_at_k) == (1.0, 0.0)


@pytest.mark.parametrize(
    "data",
    [
        {"date": "x", "eval": {}},
        {"eval": {"HumanEval/0": []}},
        {"eval": {"HumanEval/0": [{"base_status": "passed", "plus_status": "pass"}]}},
        {"eval": {"HumanEval/0": [{"plus_status": "pass"}]}},
    ],
)
def test_evalplus_malformed(data):
    with pytest.raises(ValueError):
        score_evalplus(data)


# ---------------------------------------------------------------------- MultiPL-E


def multiple_problem(name: str, outcomes: list[tuple[str, int | None]]) -> dict:
    return {
        "name": name,
        "language": "lua",
        "prompt": "...",
        "tests": "...",
        "results": [
            {"program": "...", "stdout": "", "stderr": "", "exit_code": code, "status": status}
            for status, code in outcomes
        ],
    }


@pytest.mark.parametrize(
    ("status", "exit_code", "passes"),
    [
        ("OK", 0, True),
        ("OK", 1, False),
        ("Exception", 0, False),
        ("Timeout", None, False),
        ("SyntaxError", 1, False),
    ],
)
def test_multiple_completion_pass_rule(status, exit_code, passes):
    assert multiple_completion_passes({"status": status, "exit_code": exit_code}) is passes


def test_multiple_scoring_and_loading(tmp_path):
    problems = [
        multiple_problem("HumanEval_0_has_close_elements", [("OK", 0), ("OK", 1)]),
        multiple_problem("HumanEval_1_separate_paren_groups", [("Exception", 1), ("OK", 0)]),
        multiple_problem("HumanEval_2_truncate_number", [("Timeout", None), ("OK", 2)]),
    ]
    (tmp_path / "HumanEval_0_has_close_elements.results.json").write_text(json.dumps(problems[0]))
    (tmp_path / "HumanEval_1_separate_paren_groups.results.json").write_text(
        json.dumps(problems[1])
    )
    with gzip.open(tmp_path / "HumanEval_2_truncate_number.results.json.gz", "wt") as handle:
        json.dump(problems[2], handle)
    (tmp_path / "notes.json").write_text("{}")  # not a result file: ignored
    loaded = load_multiple_results(tmp_path)
    assert [p["name"] for p in loaded] == [p["name"] for p in problems]
    score = score_multiple(loaded, k=1)
    assert score.n_problems == 3
    assert score.languages == ("lua",)
    assert score.pass_at_k == pytest.approx((0.5 + 0.5 + 0.0) / 3)
    assert score_multiple(loaded, k=2).pass_at_k == pytest.approx((1 + 1 + 0) / 3)


def test_multiple_malformed():
    with pytest.raises(ValueError):
        score_multiple([{"name": "x", "results": []}])
    with pytest.raises(ValueError):
        score_multiple([{"results": [{"status": "OK", "exit_code": 0}]}])
    dup = multiple_problem("p", [("OK", 0)])
    with pytest.raises(ValueError):
        score_multiple([dup, dup])
