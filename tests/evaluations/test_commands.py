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
    first.refresh_from_db()
    assert (first.status, first.done, first.errors) == (RunStatus.QUEUED, 0, 0)
    assert driver.drive(first.pk) == RunStatus.DONE
    first.refresh_from_db()
    assert (first.errors, first.score, first.done) == (0, 100.0, 3)
