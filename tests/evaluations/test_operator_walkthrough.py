"""An operator, from the admin only: add providers, evaluate three models on the three suites,
and find the results on the correlations page.

Browser-free: the test client posts the admin's own forms. A real Celery worker runs the
evaluations and then the correlations; the stub provider (in this process) plays three
models of decreasing quality and a judge. The arena already knows the three models (a
published snapshot rates them in the same order), so every local board correlates +1.
"""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from catalogue.models import ArenaModel
from evaluations.models import EvaluationRun, RunStatus
from external.models import CorrelationResult
from tests.celery_worker import running_worker, wait_for
from tests.evaluations.scripts import humaneval_answers, infill_answers
from tests.evaluations.test_worker import WORKER_ENV
from tests.external.test_correlations import make_snapshot
from tests.factories import ArenaModelFactory

pytestmark = pytest.mark.integration

RATINGS = {"walk-best": 1100.0, "walk-mid": 1000.0, "walk-low": 900.0}
QUESTIONS = (  # the start of the example set's first three questions
    "I have log lines like",
    "My React component re-renders",
    "Our `OrderService` class",
)
SOURCES = ("HumanEval pass@1 (local)", "HumanEval-infilling (local)", "CodeArena judge (local)")


def script(stub) -> None:
    """walk-best gets 3 of 3 right on every suite, walk-mid 2, walk-low 1."""
    for right, key in zip((3, 2, 1), RATINGS, strict=True):
        answers = {
            **humaneval_answers({i: None for i in range(right)}),
            **infill_answers({i: None for i in range(right)}),
            **{QUESTIONS[i]: "GOOD answer" for i in range(right)},
        }
        stub.behave(key, answers=answers, middle="weak answer")
    stub.behave("walk-judge", judge="prefer:GOOD")


def add_provider(client, model: ArenaModel, stub) -> None:
    response = client.post(
        reverse("admin:serving_modelprovider_add"),
        {
            "model": model.pk,
            "kind": "openai_chat",
            "base_url": stub.base_url,
            "remote_model": model.key,
            "api_key_env": "",
            "timeout_seconds": "10",
            "max_concurrency": "8",
            "tags": "",
            "enabled": "on",
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]


def evaluate(client, model: ArenaModel, judge: ArenaModel) -> None:
    page = client.get(reverse("admin:catalogue_arenamodel_change", args=[model.pk]))
    start = re.search(r'id="evaluate-model" href="([^"]+)"', page.content.decode()).group(1)
    form = client.get(start.replace("&amp;", "&"))
    assert form.status_code == 200
    response = client.post(
        reverse("admin:evaluations_evaluationrun_add"),
        {
            "model": model.pk,
            "suites": ["humaneval", "infilling", "codearena"],
            "infilling_set": "random-span-light",
            "judge_model": judge.pk,
            "baseline_model": judge.pk,
            "limit": "3",
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]


def test_from_the_admin_to_the_correlations_page(
    transactional_db, admin_client, stub, eval_settings, settings, monkeypatch
):
    for name, value in WORKER_ENV.items():
        monkeypatch.setenv(name, value)
    models = [ArenaModelFactory(key=key) for key in RATINGS]
    judge = ArenaModelFactory(key="walk-judge", visibility="hidden")
    snapshot = make_snapshot({"overall": RATINGS})
    script(stub)
    with running_worker(redis_url=settings.REDIS_URL, monkeypatch=monkeypatch):
        for model in [*models, judge]:
            add_provider(admin_client, model, stub)
        for model in models:
            evaluate(admin_client, model, judge)
        assert EvaluationRun.objects.count() == 9
        wait_for(
            lambda: EvaluationRun.objects.filter(status=RunStatus.DONE).count() == 9,
            timeout=300,
        )
        # Four boards: HumanEval pass@1, infilling pass@1 and well-formatted, the judge.
        local = CorrelationResult.objects.filter(
            snapshot=snapshot, slice_key="overall", board__source__key__startswith="local-"
        )
        wait_for(lambda: local.filter(n=3).count() == 4, timeout=120)
    runs = EvaluationRun.objects.select_related("model")
    assert {(r.model.key, r.suite): r.score for r in runs} == {
        (key, suite): pytest.approx(100.0 * right / 3)
        for right, key in zip((3, 2, 1), RATINGS, strict=True)
        for suite in ("humaneval", "infilling", "codearena")
    }
    for result in local:
        assert result.spearman == pytest.approx(1.0), result.board.label
    html = admin_client.get(reverse("correlations")).content.decode()
    for name in SOURCES:
        assert name in html
    # The admin shows the same runs on each model's page.
    page = admin_client.get(reverse("admin:catalogue_arenamodel_change", args=[models[0].pk]))
    assert page.content.decode().count("100.0") >= 3
