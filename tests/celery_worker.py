"""A real `celery worker` process for integration tests, on the test database and a private queue."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def running_worker(
    *, redis_url: str, monkeypatch, startup_seconds: float = 120.0
) -> Iterator[subprocess.Popen]:
    from django.db import connection

    from arena_site.celery import app as celery_app

    queue = f"test-{uuid.uuid4().hex[:8]}"
    # Tasks sent from this process go to the private queue the worker listens on.
    monkeypatch.setitem(celery_app.conf, "task_default_queue", queue)
    # The namespaced key from Django's settings wins over the plain one (celery 5.6).
    monkeypatch.setitem(celery_app.conf, "CELERY_TASK_DEFAULT_QUEUE", queue)
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}",
        "REDIS_URL": redis_url,
        "CELERY_QUEUE": queue,
        "RECOMPUTE_DEBOUNCE_SECONDS": "1",
    }
    command = [
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
    ]
    # The worker logs to a file, not a pipe: nobody reads a pipe after start-up, and a
    # full pipe would block the worker mid-task.
    log = Path(tempfile.mkstemp(prefix="celery-worker-", suffix=".log")[1])
    handle = log.open("w")
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT)
    proc.log_path = log  # type: ignore[attr-defined]  # for a test that wants to read it
    deadline = time.time() + startup_seconds
    while time.time() < deadline and "ready." not in log.read_text():
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    if "ready." not in log.read_text():
        proc.kill()
        raise RuntimeError("Celery worker did not start:\n" + log.read_text()[-4000:])
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        handle.close()
        print(f"celery worker log (last lines):\n{log.read_text()[-3000:]}")
        log.unlink(missing_ok=True)


def wait_for(predicate: Callable[[], object], *, timeout: float = 120.0, interval: float = 0.3):
    """Poll `predicate` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s")
