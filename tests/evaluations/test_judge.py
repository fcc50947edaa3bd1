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
    assert (item.game1.score, item.game2.score) == (2, 2)  # Arena-Hard's signed scores
    assert (item.game1.result, item.game2.result) == ("win", "win")
    assert item.judged.outcome == "won_both" and item.judged.score == 1.0


def test_a_judge_always_preferring_position_a_gives_half_and_full_disagreement():
    def biased(_messages):
        return "Hmm. [[A>B]]"

    items = [j.judge_question(biased, q, "model", "base") for q in QUESTIONS]
    summary = summarize(items, rounds=200)
    # Each question: lost as B, won as A -- half a win by the seed's rule.
    assert summary.overall.win_rate.value == 0.5 and summary.overall.tie_rate.value == 0.0
    assert summary.arena_hard.ties == len(QUESTIONS)  # the summed rule called them ties
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
    assert game.verdict is None and game.result == "no_verdict" and game.score == 0
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
    assert (summary.overall.n, summary.overall.counts.games_won, summary.not_judged) == (5, 10, 1)
    # Reusing the stored baseline answers asks the baseline model nothing.
    again = j.run_suite(
        QUESTIONS[:2], model, judge_preferring("GOOD"), baseline_answers=run.baseline_answers
    )
    assert len(baseline_calls) == len(QUESTIONS) and len(again.items) == 2


def test_run_suite_needs_a_baseline():
    with pytest.raises(ValueError, match="no baseline"):
        j.run_suite(QUESTIONS, judge_preferring("x"), judge_preferring("x"))


def _questions(outcomes: list[str], category: str | None = None) -> list[JudgedQuestion]:
    # (game1, game2) verdicts giving each question kind for the model.
    pairs = {
        "win": (Verdict.B_BETTER, Verdict.A_BETTER),  # both games won: 1
        "tie": (Verdict.TIE, Verdict.TIE),  # both tied: 0, two tied games
        "loss": (Verdict.A_BETTER, Verdict.B_BETTER),  # both lost: 0
        "split": (Verdict.B_BETTER, Verdict.B_BETTER),  # one won, one lost: 0.5
    }
    return [JudgedQuestion(*pairs[o], category=category) for o in outcomes]


def test_rates_per_category_and_position_bias_counts():
    items = _questions(["win", "win", "loss", "tie"], "x") + _questions(["split", "win"], "y")
    summary = summarize(items, rounds=500)
    counts = summary.overall.counts
    assert (counts.games_won, counts.games_tied, counts.games_lost) == (7, 2, 3)
    assert summary.overall.win_rate.value == pytest.approx(3.5 / 6)
    assert summary.per_category["x"].win_rate.value == 0.5
    assert summary.per_category["x"].tie_rate.value == 0.25
    assert summary.per_category["y"].win_rate.value == 0.75
    bias = position_bias(items)
    assert (bias.pairs, bias.disagreements) == (6, 1)
    assert bias.decisive_games == 10 and bias.first_position_wins == 4


def test_a_single_question_category_has_no_interval():
    summary = summarize(_questions(["win", "loss"], "x") + _questions(["win"], "alone"))
    alone = summary.per_category["alone"]
    assert alone.n == 1 and alone.win_rate.value == 1.0
    assert math.isnan(alone.win_rate.low) and math.isnan(alone.win_rate.high)
    assert not math.isnan(summary.per_category["x"].win_rate.low)


def test_bootstrap_equals_resampling_the_questions():
    # An independent bootstrap: resample question indices, average the per-question scores.
    kinds = ["win"] * 9 + ["split"] * 7 + ["tie"] * 5 + ["loss"] * 4
    items = _questions(kinds)
    scores = np.array([q.score for q in items])
    ties = np.array([q.ties / 2 for q in items])
    rng = np.random.default_rng(5)
    picks = rng.integers(0, len(items), size=(20_000, len(items)))
    expected_win = np.percentile(scores[picks].mean(axis=1), [2.5, 97.5])
    expected_tie = np.percentile(ties[picks].mean(axis=1), [2.5, 97.5])
    summary = summarize(items, rounds=20_000, seed=6)
    win, tie = summary.overall.win_rate, summary.overall.tie_rate
    assert win.value == pytest.approx(scores.mean()) and tie.value == pytest.approx(ties.mean())
    assert (win.low, win.high) == pytest.approx(tuple(expected_win), abs=0.01)
    assert (tie.low, tie.high) == pytest.approx(tuple(expected_tie), abs=0.01)


def test_bootstrap_interval_matches_the_normal_approximation():
    n, wins, splits, ties = 400, 120, 60, 80
    items = _questions(
        ["win"] * wins + ["split"] * splits + ["tie"] * ties + ["loss"] * (n - wins - splits - ties)
    )
    summary = summarize(items, rounds=20_000, seed=3)
    for rate, values in (
        (summary.overall.win_rate, np.array([q.score for q in items])),
        (summary.overall.tie_rate, np.array([q.ties / 2 for q in items])),
    ):
        half = 1.96 * values.std() / math.sqrt(n)
        assert rate.value == pytest.approx(values.mean())
        assert rate.low == pytest.approx(values.mean() - half, abs=0.006)
        assert rate.high == pytest.approx(values.mean() + half, abs=0.006)


def test_bootstrap_intervals_cover_the_true_rate():
    rng = np.random.default_rng(11)
    kinds, shares = ["win", "split", "tie", "loss"], (0.3, 0.2, 0.2, 0.3)
    truth = 0.3 + 0.2 / 2
    covered, runs = 0, 300
    for run in range(runs):
        outcomes = rng.choice(kinds, size=150, p=shares).tolist()
        rate = summarize(_questions(outcomes), rounds=400, seed=run).overall.win_rate
        covered += rate.low <= truth <= rate.high
    # 95% intervals: 285 of 300 expected; 270 is more than 4 standard errors below.
    assert covered >= 270


def test_empty_summary_is_nan_not_an_error():
    summary = summarize([])
    assert summary.overall.n == 0 and math.isnan(summary.overall.win_rate.low)
    assert math.isnan(summary.position_bias.disagreement_rate)
