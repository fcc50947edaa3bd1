"""The evaluations' admin: the model page's button and results, the start form, a run's page,
the FiM report, question set imports, actions, and the public-visibility guard."""

from __future__ import annotations

import pytest
from django.urls import reverse

from catalogue.models import ArenaModel, Visibility
from evaluations import driver, services
from evaluations.models import EvaluationRun, QuestionSet, RunStatus, Suite
from tests.evaluations.conftest import add_model
from tests.evaluations.scripts import humaneval_answers, infill_answers


def finished(**kwargs) -> EvaluationRun:
    run = services.create_run(concurrency=1, **kwargs)
    assert driver.drive(run.pk) == RunStatus.DONE
    run.refresh_from_db()
    return run


def model_page(client, model) -> str:
    page = client.get(reverse("admin:catalogue_arenamodel_change", args=[model.pk]))
    assert page.status_code == 200
    return page.content.decode()


def test_the_model_page_has_the_evaluate_button_and_its_results(admin_client, stub, eval_settings):
    model = add_model("coder", stub)
    html = model_page(admin_client, model)
    start = reverse("admin:evaluations_evaluationrun_add") + f"?model={model.pk}"
    assert f'href="{start}"' in html and "No finished evaluation yet" in html
    assert "Merge into another model" in html  # the catalogue's own tools are still there
    stub.behave("coder", answers=humaneval_answers({0: None}))
    run = finished(suite=Suite.HUMANEVAL, model=model, limit=2)
    html = model_page(admin_client, model)
    assert "HumanEval greedy pass@1" in html and f"#{run.pk}" in html and "50.0" in html
    # The start form comes with the model chosen.
    form = admin_client.get(start).content.decode()
    assert f'<option value="{model.pk}" selected>' in form


def test_the_start_form_queues_one_run_per_suite(
    admin_client, stub, django_capture_on_commit_callbacks
):
    model = add_model("coder", stub)
    judge = add_model("judge", stub, visibility="hidden")
    with django_capture_on_commit_callbacks() as queued:
        response = admin_client.post(
            reverse("admin:evaluations_evaluationrun_add"),
            {
                "model": model.pk,
                "suites": ["humaneval", "infilling", "codearena"],
                "infilling_set": "single-line",
                "judge_model": judge.pk,
                "baseline_model": judge.pk,
                "limit": "3",
            },
        )
    assert response.status_code == 302
    runs = {r.suite: r for r in EvaluationRun.objects.all()}
    assert set(runs) == {"humaneval", "infilling", "codearena"}
    assert runs["infilling"].dataset == "single-line" and runs["codearena"].total == 3
    assert all(r.status == RunStatus.QUEUED and r.created_by == "admin" for r in runs.values())
    assert len(queued) == 3  # one driver task each, sent after commit


def test_the_start_form_says_what_is_missing_and_starts_nothing(admin_client, stub):
    model = add_model("coder", stub)
    response = admin_client.post(
        reverse("admin:evaluations_evaluationrun_add"),
        {"model": model.pk, "suites": ["humaneval", "codearena"], "infilling_set": "single-line"},
    )
    assert response.status_code == 200
    assert "Choose a judge" in response.content.decode()
    assert not EvaluationRun.objects.exists()


def test_a_runs_page_shows_its_summary_and_the_items(admin_client, stub, eval_settings):
    model = add_model("m", stub)
    judge = add_model("j", stub, visibility="hidden")
    stub.behave("m", answers={"": "GOOD"})
    stub.behave("j", judge="always:A>B", answers={"": "base"})
    run = finished(
        suite=Suite.CODEARENA, model=model, judge_model=judge, baseline_model=judge, limit=3
    )
    page = admin_client.get(reverse("admin:evaluations_evaluationrun_change", args=[run.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert 'id="judge-summary"' in html and "The two orders disagree on 3 of 3 questions" in html
    assert "CodeArena win rate" in html and "50.0%" in html  # always "A": half of each question
    # The first three questions are in three categories: one question each, no interval.
    assert html.count("(n=1, no interval)") == 3 and "[100.0, 100.0]" not in html
    assert 'http-equiv="refresh"' not in html  # done: no refresh
    items = admin_client.get(
        reverse("admin:evaluations_evaluationitem_changelist") + f"?run__id__exact={run.pk}"
    )
    assert items.status_code == 200 and "ex-003" in items.content.decode()
    listing = admin_client.get(reverse("admin:evaluations_evaluationrun_changelist")).content
    assert b'<progress max="3" value="3">' in listing
    assert b"Sandbox (EVALUATION_SANDBOX_ISOLATION=bwrap): bubblewrap isolates" in listing


def test_the_admin_says_when_runs_are_refused_for_want_of_isolation(admin_client, eval_settings):
    eval_settings.EVALUATION_SANDBOX_BWRAP = "/nonexistent/bwrap"
    for name in ("changelist", "add"):
        page = admin_client.get(reverse(f"admin:evaluations_evaluationrun_{name}"))
        html = page.content.decode()
        assert 'id="sandbox-state" class="errornote"' in html, name
        assert "HumanEval and infilling runs are refused" in html
        assert "set EVALUATION_SANDBOX_ISOLATION=none" in html
    eval_settings.EVALUATION_SANDBOX_ISOLATION = "none"
    page = admin_client.get(reverse("admin:evaluations_evaluationrun_changelist"))
    assert "turned off by the operator" in page.content.decode()


def test_an_active_runs_page_refreshes_itself_and_can_be_cancelled(admin_client, stub):
    model = add_model("m", stub)
    run = services.create_run(suite=Suite.HUMANEVAL, model=model, limit=2)
    html = admin_client.get(reverse("admin:evaluations_evaluationrun_change", args=[run.pk]))
    assert 'http-equiv="refresh"' in html.content.decode()
    admin_client.post(
        reverse("admin:evaluations_evaluationrun_changelist"),
        {"action": "cancel", "_selected_action": [run.pk]},
    )
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED


def test_the_fim_report_lists_each_models_latest_check_next_to_copilot_arenas(
    admin_client, stub, eval_settings
):
    good, poor = add_model("good-fim", stub), add_model("poor-fim", stub)
    stub.behave("good-fim", answers=infill_answers({0: None, 1: None}))
    stub.behave("poor-fim", answers=infill_answers({0: None}), middle="Here you go!")
    finished(suite=Suite.INFILLING, model=good, limit=2)
    finished(suite=Suite.INFILLING, model=poor, limit=2)
    page = admin_client.get(reverse("admin:evaluations_fim_report"))
    html = page.content.decode()
    assert page.status_code == 200
    assert "good-fim" in html and "poor-fim" in html
    assert "100.0%" in html and "50.0%" in html
    assert "GPT-4o-mini" in html and "57%" in html  # 18% + 39 with their snippet prompt


def test_question_sets_are_imported_from_the_admin(admin_client, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile

    body = b'{"id": "q1", "question": "Why?", "category": "Misc", "baseline_answer": "Because."}\n'
    response = admin_client.post(
        reverse("admin:evaluations_questionset_add"),
        {"name": "mine", "file": SimpleUploadedFile("mine.jsonl", body)},
    )
    assert response.status_code == 302
    qset = QuestionSet.objects.get(name="mine")
    assert qset.questions.get().baseline_answer == "Because."
    bad = admin_client.post(
        reverse("admin:evaluations_questionset_add"),
        {"name": "bad", "file": SimpleUploadedFile("bad.jsonl", b"{not json\n")},
    )
    assert bad.status_code == 200 and "line 1: not JSON" in bad.content.decode()
    admin_client.post(reverse("admin:evaluations_questionset_example"))
    assert QuestionSet.objects.get(name="codearena-example").questions.count() == 12


# --- the public-visibility guard ---------------------------------------------------------


def make_public(client, model):
    data = {
        "key": model.key,
        "display_name": model.display_name,
        "organization": "",
        "license": "",
        "style": model.style,
        "visibility": Visibility.PUBLIC,
        "description": "",
        "audit_reason": "ready",
        "aliases-TOTAL_FORMS": "0",
        "aliases-INITIAL_FORMS": "0",
        "aliases-MIN_NUM_FORMS": "0",
        "aliases-MAX_NUM_FORMS": "1000",
    }
    return client.post(
        reverse("admin:catalogue_arenamodel_change", args=[model.pk]), data, follow=True
    )


@pytest.fixture
def checked(db, stub, eval_settings):
    """A model whose FiM check found one of two middles well-formatted (50%)."""
    model = add_model("half", stub)
    stub.behave("half", answers=infill_answers({0: None}), middle="Here you go!")
    finished(suite=Suite.INFILLING, model=model, limit=2)
    return model


def test_going_public_below_the_threshold_warns(admin_client, checked, settings):
    settings.EVALUATION_MIN_WELL_FORMATTED = 0.8
    response = make_public(admin_client, checked)
    notes = [str(m) for m in response.context["messages"]]
    assert any("well-formatted rate is 50.0%" in m and "below" in m for m in notes), notes
    assert ArenaModel.objects.get(pk=checked.pk).visibility == Visibility.PUBLIC


def test_going_public_below_the_threshold_is_refused_when_blocking(admin_client, checked, settings):
    settings.EVALUATION_MIN_WELL_FORMATTED = 0.8
    settings.EVALUATION_BLOCK_PUBLIC = True
    response = make_public(admin_client, checked)
    assert "EVALUATION_BLOCK_PUBLIC is on" in response.content.decode()
    assert ArenaModel.objects.get(pk=checked.pk).visibility == Visibility.PRIVATE


def test_going_public_above_the_threshold_says_nothing(admin_client, checked, settings):
    settings.EVALUATION_MIN_WELL_FORMATTED = 0.5
    settings.EVALUATION_BLOCK_PUBLIC = True
    response = make_public(admin_client, checked)
    notes = [str(m) for m in response.context["messages"]]
    assert not any("well-formatted" in m or "fill-in-the-middle" in m for m in notes), notes
    assert ArenaModel.objects.get(pk=checked.pk).visibility == Visibility.PUBLIC


def test_going_public_unchecked_warns_but_is_never_blocked(admin_client, stub, settings):
    settings.EVALUATION_BLOCK_PUBLIC = True
    model = add_model("unchecked", stub)
    response = make_public(admin_client, model)
    notes = [str(m) for m in response.context["messages"]]
    assert any("without a fill-in-the-middle check" in m for m in notes), notes
    assert ArenaModel.objects.get(pk=model.pk).visibility == Visibility.PUBLIC
