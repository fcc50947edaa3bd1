"""Votes posted through the API reach the published board via a real Celery worker on Redis."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection

from arena_site.celery import app as celery_app
from leaderboard.locks import single_flight
from leaderboard.models import RatingConfig, Snapshot
from leaderboard.selectors import board
from leaderboard.services import seed_demo_catalogue
from leaderboard.tasks import recompute_leaderboard

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def worker(transactional_db, settings, monkeypatch):
    """A real `celery worker` process on the test database and a private queue."""
    queue = f"test-{uuid.uuid4().hex[:8]}"
    monkeypatch.setitem(celery_app.conf, "task_default_queue", queue)
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_QUEUE": queue,
        "RECOMPUTE_DEBOUNCE_SECONDS": "1",
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "arena_site",
            "worker",
            "--pool=solo",
            "-Q",
            queue,
            "--loglevel=INFO",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.time() + 30
    lines = []
    while time.time() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        if "ready." in line:
            break
    else:
        proc.kill()
        pytest.fail("Celery worker did not start:\n" + "".join(lines))
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()


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


def wait_for(predicate, timeout: float = 60.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError("timed out")


def test_votes_posted_through_the_api_appear_on_the_next_board(worker, keyed_api, settings):
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
    time.sleep(2.5)  # past the debounce: no second run was queued by the later votes
    assert Snapshot.objects.filter(status="published").count() == 1


def test_concurrent_trigger_runs_no_second_recompute(transactional_db):
    with single_flight("recompute", timeout=60) as mine:
        assert mine
        # a second trigger while the first holds the Redis lock does nothing
        assert recompute_leaderboard.apply(kwargs={"trigger": "beat"}).get() is None
    assert Snapshot.objects.count() == 0
    assert recompute_leaderboard.apply(kwargs={"trigger": "beat"}).get() is not None
    assert Snapshot.objects.count() == 1
