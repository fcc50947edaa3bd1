"""The CodeArena judge: the swap, strict labels, the retry, scores, and the summary statistics.

Pure (``-p no:django``): the judges here are small functions reading the judging prompt.
Truth for the intervals: the normal approximation of a proportion and a coverage simulation
with known win and tie probabilities.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.codearena import JudgedQuestion, Verdict
from evaluations import judge as j
from evaluations.judge_stats import position_bias, summarize
from evaluations.questions import JudgeQuestion

QUESTIONS = [
    JudgeQuestion(f"q{i}", f"Question {i}?", category="alpha" if i % 2 else "beta")
    for i in range(6)
]


def section(prompt: str, marks: tuple[str, str]) -> str:
    return prompt.split(marks[0], 1)[1].split(marks[1], 1)[0]


def judge_preferring(marker: str):
    """A consistent judge: the answer containing ``marker`` is much better."""

    def judge(messages):
        prompt = messages[1]["content"]
        a, b = marker in section(prompt, j.ANSWER_A), marker in section(prompt, j.ANSWER_B)
        label = "A>>B" if a and not b else "B>>A" if b and not a else "A=B"
        return f"I would answer ... Comparing both. My final verdict: [[{label}]]"

    return judge


def test_judging_prompt_shows_both_answers_in_order():
    messages = j.judge_messages("How?", "first answer", "second answer")
    assert messages[0]["content"] == j.JUDGE_SYSTEM
    user = messages[1]["content"]
    assert section(user, j.QUESTION).strip() == "How?"
    assert section(user, j.ANSWER_A).strip() == "first answer"
    assert section(user, j.ANSWER_B).strip() == "second answer"
    assert "own answer" in j.JUDGE_SYSTEM  # Arena-Hard style: the judge answers first


def test_games_are_swapped_and_scored_from_the_models_side():
    item = j.judge_question(judge_preferring("GOOD"), QUESTIONS[0], "GOOD code", "base code")
    assert (item.game1.model_position, item.game2.model_position) == ("B", "A")
    assert item.game1.verdict is Verdict.B_MUCH_BETTER  # model shown second, preferred
    assert item.game2.verdict is Verdict.A_MUCH_BETTER  # model shown first, preferred
    assert (item.game1.score, item.game2.score) == (2, 2)
    assert item.judged.outcome == "win" and item.judged.score == 4


def test_a_judge_always_preferring_position_a_gives_ties_and_full_disagreement():
    def biased(_messages):
        return "Hmm. [[A>B]]"

    items = [j.judge_question(biased, q, "model", "base") for q in QUESTIONS]
    summary = summarize(items, rounds=200)
    assert summary.overall.ties == len(QUESTIONS)
    assert summary.overall.win_rate.value == 0.0
    assert summary.position_bias.disagreement_rate == 1.0
    assert summary.position_bias.first_position_share == 1.0


def test_no_label_is_retried_once_with_the_reply_shown():
    seen = []

    def judge(messages):
        seen.append(messages)
        return "I think both are fine." if len(seen) == 1 else "[[B>A]]"

    game = j.judge_game(judge, "Q?", "a", "b", model_position="B")
    assert game.verdict is Verdict.B_BETTER
    assert game.attempts == 2
    assert game.judgments == ("I think both are fine.", "[[B>A]]")
    retry = seen[1]
    assert retry[-2] == {"role": "assistant", "content": "I think both are fine."}
    assert retry[-1]["content"] == j.RETRY_PROMPT


@pytest.mark.parametrize(
    "reply",
    ["No verdict here.", "[[A>B]] or maybe [[B>A]]", "[[A>>>B]]", "[[C>A]]", "A>B"],
    ids=["none", "conflicting", "malformed", "unknown", "unbracketed"],
)
def test_invalid_labels_twice_leave_no_verdict_and_score_zero(reply):
    calls = []

    def judge(messages):
        calls.append(messages)
        return reply

    game = j.judge_game(judge, "Q?", "a", "b", model_position="A")
    assert game.verdict is None and game.score == 0
    assert len(calls) == 2  # retried exactly once


def test_a_failed_judge_call_is_retried_with_the_same_request():
    calls = []

    def judge(messages):
        calls.append(messages)
        if len(calls) == 1:
            raise TimeoutError("slow")
        return "[[A=B]]"

    game = j.judge_game(judge, "Q?", "a", "b", model_position="A")
    assert game.verdict is Verdict.TIE and game.attempts == 2
    assert game.error == "TimeoutError"
    assert calls[0] == calls[1]


def test_run_suite_generates_the_baseline_once_and_reports_failures():
    baseline_calls = []

    def baseline(messages):
        baseline_calls.append(messages[-1]["content"])
        return "base answer"

    def model(messages):
        if "Question 5" in messages[-1]["content"]:
            raise ConnectionError("down")
        return "GOOD answer"

    run = j.run_suite(QUESTIONS, model, judge_preferring("GOOD"), baseline=baseline, max_workers=3)
    assert sorted(baseline_calls) == sorted(q.question for q in QUESTIONS)
    assert run.baseline_answers == {q.question_id: "base answer" for q in QUESTIONS}
    failed = [i for i in run.items if i.error]
    assert [i.question_id for i in failed] == ["q5"] and failed[0].error == "model: ConnectionError"
    summary = summarize(run.items, rounds=200)
    assert (summary.overall.n, summary.overall.wins, summary.not_judged) == (5, 5, 1)
    # Reusing the stored baseline answers asks the baseline model nothing.
    again = j.run_suite(
        QUESTIONS[:2], model, judge_preferring("GOOD"), baseline_answers=run.baseline_answers
    )
    assert len(baseline_calls) == len(QUESTIONS) and len(again.items) == 2


def test_run_suite_needs_a_baseline():
    with pytest.raises(ValueError, match="no baseline"):
        j.run_suite(QUESTIONS, judge_preferring("x"), judge_preferring("x"))


def _questions(outcomes: list[str], category: str | None = None) -> list[JudgedQuestion]:
    # (game1, game2) verdicts producing each outcome for the model.
    pairs = {
        "win": (Verdict.B_BETTER, Verdict.A_BETTER),
        "tie": (Verdict.TIE, Verdict.TIE),
        "loss": (Verdict.A_BETTER, Verdict.B_BETTER),
        "split": (Verdict.B_BETTER, Verdict.B_BETTER),  # order decided it: a tie
    }
    return [JudgedQuestion(*pairs[o], category=category) for o in outcomes]


def test_rates_per_category_and_position_bias_counts():
    items = _questions(["win", "win", "loss", "tie"], "x") + _questions(["split", "win"], "y")
    summary = summarize(items, rounds=500)
    assert (summary.overall.wins, summary.overall.ties, summary.overall.losses) == (3, 2, 1)
    assert summary.per_category["x"].win_rate.value == 0.5
    assert summary.per_category["y"].tie_rate.value == 0.5
    bias = position_bias(items)
    assert (bias.pairs, bias.disagreements) == (6, 1)
    assert bias.decisive_games == 10 and bias.first_position_wins == 4


def test_bootstrap_interval_matches_the_normal_approximation():
    n, wins, ties = 400, 120, 80
    items = _questions(["win"] * wins + ["tie"] * ties + ["loss"] * (n - wins - ties))
    summary = summarize(items, rounds=20_000, seed=3)
    for rate, p in ((summary.overall.win_rate, wins / n), (summary.overall.tie_rate, ties / n)):
        half = 1.96 * math.sqrt(p * (1 - p) / n)
        assert rate.value == p
        assert rate.low == pytest.approx(p - half, abs=0.006)
        assert rate.high == pytest.approx(p + half, abs=0.006)


def test_bootstrap_intervals_cover_the_true_rate():
    rng = np.random.default_rng(11)
    truth = (0.35, 0.25, 0.40)
    covered, runs = 0, 300
    for run in range(runs):
        outcomes = rng.choice(["win", "tie", "loss"], size=150, p=truth).tolist()
        rate = summarize(_questions(outcomes), rounds=400, seed=run).overall.win_rate
        covered += rate.low <= truth[0] <= rate.high
    # 95% intervals: 285 of 300 expected; 270 is more than 4 standard errors below.
    assert covered >= 270


def test_empty_summary_is_nan_not_an_error():
    summary = summarize([])
    assert summary.overall.n == 0 and math.isnan(summary.overall.win_rate.low)
    assert math.isnan(summary.position_bias.disagreement_rate)
