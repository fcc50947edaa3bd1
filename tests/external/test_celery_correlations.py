"""A real Celery worker on Redis: a recompute run by the worker is followed by its
correlations, computed by the worker too (snapshot_ready -> on commit -> task)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from arena_site.celery import app as celery_app
from external.models import CorrelationResult
from external.services import import_demo_scores, seed_external_aliases
from leaderboard.models import RatingConfig, Snapshot
from leaderboard.services import seed_demo_catalogue
from leaderboard.tasks import recompute_leaderboard

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def worker(transactional_db, settings, monkeypatch):
    """A `celery worker` process on the test database and a private queue."""
    queue = f"test-{uuid.uuid4().hex[:8]}"
    monkeypatch.setitem(celery_app.conf, "task_default_queue", queue)
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST']}:"
        f"{db['PORT'] or 5432}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_QUEUE": queue,
    }
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "celery", "-A", "arena_site", "worker"),
            *("--pool=solo", "-Q", queue, "--loglevel=INFO"),
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


def wait_for(predicate, timeout: float = 90.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError("timed out")


def test_the_worker_computes_correlations_after_its_recompute(worker):
    seed_demo_catalogue()
    seed_external_aliases()
    import_demo_scores()
    config = RatingConfig.current()
    config.rounds, config.slice_rounds = 100, 50
    config.save()
    call_command("simulate_battles", "--battles", "4000", "--seed", "3", stdout=io.StringIO())
    recompute_leaderboard.delay(trigger="test")
    snapshot = wait_for(lambda: Snapshot.objects.filter(status="published").first())
    rows = wait_for(
        lambda: (
            CorrelationResult.objects.filter(snapshot=snapshot, slice_key="overall").count() == 14
            and CorrelationResult.objects.filter(snapshot=snapshot)
        )
    )
    assert rows.filter(slice_key__startswith="task_type:").exists()
    assert rows.get(slice_key="overall", board__source__key="chatbot_arena").n == 9
