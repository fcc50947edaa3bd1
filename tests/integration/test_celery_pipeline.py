"""Votes posted through the API reach the published board via a real Celery worker on Redis."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache

from arena_site.celery import app as celery_app
from catalogue.services import seed_demo_catalogue
from core.locks import single_flight
from ingest import triggers
from ingest.triggers import PENDING_KEY
from leaderboard.models import RatingConfig, Snapshot
from leaderboard.selectors import board
from leaderboard.tasks import recompute_leaderboard
from tests.celery_worker import wait_for

pytestmark = pytest.mark.integration


def vote(i: int, outcome: str) -> dict:
    return {
        "pair_id": f"int-{i}",
        "user_id": f"user-{i % 7}",
        "model_a": "codestral-2405",
        "model_b": "gpt-4o-mini-2024-07-18" if i % 2 else "deepseek-coder-fim",
        "outcome": outcome,
        "privacy": "Private",
        "file_type": "python",
    }


def test_votes_posted_through_the_api_appear_on_the_next_board(celery_worker, keyed_api, settings):
    settings.RECOMPUTE_ON_VOTES = True
    settings.RECOMPUTE_DEBOUNCE_SECONDS = 1
    seed_demo_catalogue()
    config = RatingConfig.current()
    config.rounds, config.slice_rounds, config.min_model_votes = 100, 50, 1
    config.save()
    battles = [vote(i, "model_a" if i % 3 else "model_b") for i in range(120)]
    r = keyed_api.post(
        "/api/v1/battles/batch",
        data=json.dumps({"battles": battles}),
        content_type="application/json",
    )
    assert r.status_code == 201
    for i in range(120, 150):  # single votes in quick succession: still one debounced run
        assert (
            keyed_api.post(
                "/api/v1/battles",
                data=json.dumps(vote(i, "model_a")),
                content_type="application/json",
            ).status_code
            == 201
        )

    snap = wait_for(lambda: Snapshot.objects.filter(status="published", battles=150).first())
    data = board(snapshot_id=snap.pk)
    votes = {m["model"]: m["votes"] for m in data["models"]}
    assert votes == {"codestral-2405": 150, "gpt-4o-mini-2024-07-18": 75, "deepseek-coder-fim": 75}
    assert snap.trigger == "votes"
    # No second run was queued by the later votes. A run is queued only by the vote that
    # sets the pending flag; the flag is clear and the worker holds no scheduled task, so
    # nothing more will come.
    assert cache.get(PENDING_KEY) is None
    inspect = celery_app.control.inspect(timeout=10)
    held = [t for tasks in (inspect.scheduled() or {}).values() for t in tasks]
    held += [t for tasks in (inspect.reserved() or {}).values() for t in tasks]
    # (other apps' housekeeping, e.g. evaluations' resume at worker start, may be held too)
    assert [t for t in held if t["request"]["name"] == triggers.RECOMPUTE_TASK] == []
    assert Snapshot.objects.filter(status="published").count() == 1


def test_concurrent_trigger_runs_no_second_recompute(transactional_db):
    with single_flight("recompute", timeout=60) as mine:
        assert mine
        # a second trigger while the first holds the Redis lock does nothing
        assert recompute_leaderboard.apply(kwargs={"trigger": "beat"}).get() is None
    assert Snapshot.objects.count() == 0
    assert recompute_leaderboard.apply(kwargs={"trigger": "beat"}).get() is not None
    assert Snapshot.objects.count() == 1
