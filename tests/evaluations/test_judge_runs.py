"""CodeArena judge runs stored and scored: the swap, strict labels, baseline answers reused.

The example question set (12 questions, 7 categories, no baseline answers of its own) is
imported by the run; a baseline model answers each question once.
"""

from __future__ import annotations

import pytest

from evaluations import driver, services
from evaluations.judge import ANSWER_A, ANSWER_B
from evaluations.models import BaselineAnswer, RunStatus, Suite
from evaluations.questions import load_questions
from tests.evaluations.conftest import add_model

N = 12


def section(text: str, marks: tuple[str, str]) -> str:
    return text.split(marks[0], 1)[1].split(marks[1], 1)[0].strip()


@pytest.fixture
def judged(db, stub, eval_settings):
    """A model answering GOOD, a baseline answering BASE, and a judge; stub behaviours set
    by each test for the judge."""
    stub.behave("model", answers={"": "GOOD answer"})
    stub.behave("baseline", answers={"": "BASE answer"})
    return {
        "model": add_model("model", stub),
        "baseline": add_model("baseline", stub),
        "judge": add_model("judge", stub, visibility="hidden"),
    }


def judge_run(judged, **kwargs):
    run = services.create_run(
        suite=Suite.CODEARENA,
        model=judged["model"],
        judge_model=judged["judge"],
        baseline_model=judged["baseline"],
        concurrency=1,
        **kwargs,
    )
    assert driver.drive(run.pk) == RunStatus.DONE
    run.refresh_from_db()
    return run


def test_a_consistent_judge_gives_all_wins_and_sees_both_orders(judged, stub):
    stub.behave("judge", judge="prefer:GOOD")
    stub.record = True
    try:
        run = judge_run(judged)
        judging = [r.body["messages"][-1]["content"] for r in stub.for_model("judge")]
    finally:
        stub.record = False
    assert run.total == N and run.dataset == "codearena-example"
    assert run.score == 100.0
    overall = run.summary["overall"]
    games = (overall["games_won"], overall["games_tied"], overall["games_lost"])
    assert overall["n"] == N and games == (2 * N, 0, 0)
    assert run.summary["position_bias"]["disagreement_rate"] == 0.0
    categories = {q.category for q in load_questions()}
    assert set(run.summary["per_category"]) == categories
    assert sum(c["n"] for c in run.summary["per_category"].values()) == N
    # Two judgings per question: baseline as A then the model as A.
    assert len(judging) == 2 * N
    orders = [(section(t, ANSWER_A), section(t, ANSWER_B)) for t in judging]
    assert orders.count(("BASE answer", "GOOD answer")) == N
    assert orders.count(("GOOD answer", "BASE answer")) == N
    item = run.items.get(item_key="ex-001")
    assert item.outcome == "won_both" and item.score == 1.0
    assert item.details["game1"]["verdict"] == "B>>A" and item.details["game1"]["result"] == "win"
    assert item.details["game2"]["verdict"] == "A>>B" and item.details["game2"]["result"] == "win"
    assert item.raw_output == "GOOD answer"
    # The model's answer call is timed, like the other suites' items; each game's judge calls too.
    assert item.latency_s is not None and item.latency_s > 0
    assert item.details["game1"]["latency_s"] > 0 and item.details["game2"]["latency_s"] > 0


def test_a_judge_always_preferring_a_yields_half_and_full_disagreement(judged, stub):
    stub.behave("judge", judge="always:A>B")
    run = judge_run(judged, limit=4)
    assert run.score == 50.0  # the seed's rule: each question won in one order of two
    assert run.summary["overall"]["games_tied"] == 0
    assert run.summary["arena_hard"]["ties"] == 4  # the summed rule's reading, kept apart
    bias = run.summary["position_bias"]
    assert (bias["pairs"], bias["disagreements"], bias["disagreement_rate"]) == (4, 4, 100.0)
    assert bias["first_position_share"] == 100.0


def test_a_malformed_label_is_asked_again_and_a_second_failure_scores_zero(judged, stub):
    # Question 1, game 1: malformed then valid; game 2: conflicting twice (no verdict).
    # Every later game: the consistent rule.
    valid = "Reasoning.\n\nMy final verdict is [[B>A]]."
    stub.behave(
        "judge",
        judge="prefer:GOOD",
        replies=["Verdict [[A>>>B]].", valid, "[[A>B]] or [[B>A]]", "[[A>B]] and [[B>A]]"],
    )
    run = judge_run(judged, limit=2)
    first = run.items.get(item_key="ex-001")
    assert first.details["game1"]["verdict"] == "B>A" and first.details["game1"]["attempts"] == 2
    assert first.details["game2"]["verdict"] is None and first.details["game2"]["attempts"] == 2
    assert first.score == 0.5 and first.outcome == "won_one"
    assert run.summary["no_verdict_games"] == 1
    assert run.items.get(item_key="ex-002").score == 1.0


def test_baseline_answers_are_generated_once_and_reused(judged, stub):
    stub.behave("judge", judge="prefer:GOOD")
    judge_run(judged, limit=5)
    assert stub.calls["baseline"] == 5
    assert BaselineAnswer.objects.filter(model=judged["baseline"]).count() == 5
    again = judge_run(judged, limit=5)
    assert stub.calls["baseline"] == 5  # none asked again
    assert again.score == 100.0
    assert again.items.get(item_key="ex-003").details["baseline_answer"] == "BASE answer"


def test_a_model_that_does_not_answer_leaves_the_question_unjudged(judged, stub, eval_settings):
    stub.behave("model", status=500)
    stub.behave("judge", judge="prefer:GOOD")
    run = judge_run(judged, limit=3)
    assert set(run.items.values_list("outcome", flat=True)) == {"not_judged"}
    assert run.summary["not_judged"] == 3 and run.summary["overall"]["n"] == 0
    assert run.score is None and run.errors == 3
    assert stub.calls.get("judge", 0) == 0


def test_a_judge_endpoint_outside_the_catalogue_can_judge(judged, stub):
    from evaluations.models import JudgeEndpoint

    endpoint = JudgeEndpoint.objects.create(
        name="outside-judge", base_url=stub.base_url, remote_model="judge-ep"
    )
    stub.behave("judge-ep", judge="prefer:GOOD")
    run = services.create_run(
        suite=Suite.CODEARENA,
        model=judged["model"],
        judge_endpoint=endpoint,
        baseline_model=judged["baseline"],
        limit=2,
        concurrency=1,
    )
    assert driver.drive(run.pk) == RunStatus.DONE
    run.refresh_from_db()
    assert run.score == 100.0 and stub.calls["judge-ep"] == 4
    assert run.judge_settings["label"] == "outside-judge"
