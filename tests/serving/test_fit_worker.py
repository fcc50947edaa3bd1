"""The latency fit through a real Celery worker on Redis, as beat would run it."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection

from arena_site.celery import app as celery_app
from serving.models import PairDistribution
from serving.tasks import fit_latencies
from tests.serving.conftest import SERVED, add_provider
from tests.serving.test_sampling import log_latencies

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def worker(transactional_db, settings, monkeypatch):
    queue = f"test-serving-{uuid.uuid4().hex[:8]}"
    monkeypatch.setitem(celery_app.conf, "task_default_queue", queue)
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_QUEUE": queue,
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
    lines = []
    deadline = time.time() + 30
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


def test_worker_fits_latencies_from_the_logs(worker, stub, secret_env):
    providers = {k: add_provider(k, kind, remote, stub) for k, (kind, remote) in SERVED.items()}
    fast = providers["codestral-2405"].model
    log_latencies(fast, [0.5] * 50 + [0.7] * 50, tag="w")
    fit_latencies.delay()
    deadline = time.time() + 30
    while time.time() < deadline and not PairDistribution.objects.exists():
        time.sleep(0.2)
    dist = PairDistribution.objects.get()
    fits = {f["key"]: f for f in dist.fits}
    assert fits["codestral-2405"]["n"] == 100
    assert math.exp(fits["codestral-2405"]["mu"]) == pytest.approx(math.sqrt(0.5 * 0.7), rel=0.01)
    assert fits["gpt-4o-2024-08-06"]["n"] == 0
