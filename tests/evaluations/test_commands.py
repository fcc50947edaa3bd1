"""The management commands, the resume sweep and retrying failed items."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from evaluations import driver, services
from evaluations.models import EvaluationRun, QuestionSet, RunStatus, Suite
from tests.evaluations.conftest import add_model
from tests.evaluations.scripts import humaneval_answers


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_run_evaluation_inline_prints_the_result(db, stub, eval_settings):
    add_model("coder", stub)
    stub.behave("coder", answers=humaneval_answers({0: None, 1: None}))
    out = run(
        "run_evaluation", "--suite", "humaneval", "--model", "coder", "--limit", "4", "--inline"
    )
    assert "done: 4/4 items, score 50.0%" in out
    assert "statuses" in out
    assert EvaluationRun.objects.get().concurrency == eval_settings.EVALUATION_CONCURRENCY


def test_run_evaluation_queues_for_the_workers(db, stub, django_capture_on_commit_callbacks):
    add_model("coder", stub)
    add_model("judge", stub)
    with django_capture_on_commit_callbacks() as queued:
        out = run(
            "run_evaluation",
            "--suite",
            "codearena",
            "--model",
            "coder",
            "--judge",
            "judge",
            "--baseline",
            "judge",
            "--limit",
            "5",
        )
    created = EvaluationRun.objects.get()
    assert out.strip() == f"Run #{created.pk} queued: 5 items of codearena-example."
    assert created.status == RunStatus.QUEUED and len(queued) == 1
    assert created.judge_settings["label"] == "judge"


def test_run_evaluation_explains_refusals(db, stub):
    add_model("coder", stub)
    with pytest.raises(CommandError, match="No catalogue model 'nobody'"):
        run("run_evaluation", "--suite", "humaneval", "--model", "nobody")
    with pytest.raises(CommandError, match="Choose a judge"):
        run("run_evaluation", "--suite", "codearena", "--model", "coder")


def test_import_questions(db, tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text(
        '{"id": "a", "question": "Q1?", "category": "X", "baseline_answer": "A1"}\n'
        '{"id": "b", "question": "Q2?", "category": "Y", "baseline_answer": "A2"}\n'
    )
    assert "Imported 2 questions in 2 categories as mine." in run(
        "import_questions", str(path), "--name", "mine"
    )
    path.write_text('{"id": "a", "question": "Q1?"}\n{"id": "a", "question": "again"}\n')
    with pytest.raises(CommandError, match="line 2: duplicate id 'a'"):
        run("import_questions", str(path), "--name", "mine")
    assert QuestionSet.objects.get(name="mine").questions.count() == 2  # the old set is kept


def test_runs_without_a_heartbeat_for_a_lease_are_resumed(
    db, stub, eval_settings, django_capture_on_commit_callbacks
):
    model = add_model("coder", stub)
    old = timezone.now() - timedelta(seconds=60)
    stale = services.create_run(suite=Suite.HUMANEVAL, model=model, limit=1)
    alive = services.create_run(suite=Suite.HUMANEVAL, model=model, limit=1)
    fresh = services.create_run(suite=Suite.HUMANEVAL, model=model, limit=1)
    done = services.create_run(suite=Suite.HUMANEVAL, model=model, limit=1)
    EvaluationRun.objects.filter(pk=stale.pk).update(
        status=RunStatus.RUNNING, heartbeat_at=old, created_at=old
    )
    EvaluationRun.objects.filter(pk=alive.pk).update(
        status=RunStatus.RUNNING, heartbeat_at=timezone.now(), created_at=old
    )
    EvaluationRun.objects.filter(pk=done.pk).update(status=RunStatus.DONE, created_at=old)
    with django_capture_on_commit_callbacks() as queued:
        resumed = services.resume_stalled()
    # The fresh one is queued but young: its message is presumably still on its way.
    assert resumed == [stale.pk] and len(queued) == 1
    assert fresh.pk not in resumed


def test_failed_calls_can_be_retried(db, stub, eval_settings, django_capture_on_commit_callbacks):
    model = add_model("flaky", stub)
    stub.behave("flaky", status=503)
    first = services.create_run(suite=Suite.HUMANEVAL, model=model, limit=3, concurrency=1)
    assert driver.drive(first.pk) == RunStatus.DONE
    first.refresh_from_db()
    assert (first.errors, first.score) == (3, 0.0)
    stub.behave("flaky", answers=humaneval_answers({0: None, 1: None, 2: None}))
    with django_capture_on_commit_callbacks() as queued:
        assert services.retry_errors(first) == 3
    assert len(queued) == 1
    finished_at = first.finished_at
    first.refresh_from_db()
    assert (first.status, first.done, first.errors) == (RunStatus.QUEUED, 0, 0)
    assert driver.drive(first.pk) == RunStatus.DONE
    first.refresh_from_db()
    assert (first.errors, first.score, first.done) == (0, 100.0, 3)
    # The run finished when it first did: the retry is recorded apart, so an old run
    # retried never passes for a newer one on the boards and the model's page.
    assert first.finished_at == finished_at
    assert first.rescored_at is not None and first.rescored_at > finished_at


def test_a_cancelled_run_resumed_gets_its_finishing_time_when_it_finishes(db, stub, eval_settings):
    model = add_model("coder", stub)
    stub.behave("coder", answers=humaneval_answers({}))
    first = services.create_run(suite=Suite.HUMANEVAL, model=model, limit=2, concurrency=1)
    assert services.cancel_run(first)
    first.refresh_from_db()
    cancelled_at = first.finished_at
    assert cancelled_at is not None
    assert services.resume_run(first)
    first.refresh_from_db()
    assert first.finished_at is None  # it never finished: the cancellation time goes
    assert driver.drive(first.pk) == RunStatus.DONE
    first.refresh_from_db()
    assert first.finished_at > cancelled_at and first.rescored_at is None


def test_rescore_evaluations_recomputes_stored_judge_runs(db, stub, eval_settings):
    from external.models import ExternalScore

    model, judge = add_model("m", stub), add_model("j", stub, visibility="hidden")
    stub.behave("m", answers={"": "GOOD"})
    stub.behave("j", judge="always:A>B", answers={"": "base"})
    run_ = services.create_run(
        suite=Suite.CODEARENA, model=model, judge_model=judge, baseline_model=judge, limit=4
    )
    assert driver.drive(run_.pk) == RunStatus.DONE
    calls = dict(stub.calls)
    # Make it look as the summed rule stored it: every question a tie, 0%.
    run_.items.update(outcome="tie", score=0.0)
    EvaluationRun.objects.filter(pk=run_.pk).update(score=0.0, summary={"overall": {"ties": 4}})
    ExternalScore.objects.filter(board__source__key="local-codearena").update(value=0.0)

    out = run("rescore_evaluations")
    assert f"#{run_.pk} m on codearena-example: 50.0%" in out and "Re-scored 1 run(s)." in out
    run_.refresh_from_db()
    assert run_.score == 50.0 and run_.summary["overall"]["win_rate"][0] == 50.0
    assert run_.summary["arena_hard"]["ties"] == 4
    assert set(run_.items.values_list("outcome", "score")) == {("won_one", 0.5)}
    assert run_.rescored_at is not None
    board = ExternalScore.objects.get(board__source__key="local-codearena", name="m")
    assert board.value == 50.0
    assert dict(stub.calls) == calls  # nothing asked of any model
    assert "Re-scored 0 run(s)." in run("rescore_evaluations", "999999")
