"""Exactly one beat fires: two real `celery beat` processes on the test Redis (celery-redbeat).

Each beat runs the site's schedule with the recompute every second and a short lock, and
publishes into a private queue that no worker reads, so every scheduled run stays there as
a message naming the process that sent it (`origin`). While both run, every message comes
from one of them and there is about one a second, not two; once that one is killed (-9,
no chance to release its lock), the other takes over within the lock's lifetime plus a
tick, and only it sends from then on.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis

from tests.celery_worker import wait_for

ROOT = Path(__file__).resolve().parents[2]
INTERVAL = 1  # RECOMPUTE_INTERVAL_SECONDS of the beats under test
LOCK = 3  # BEAT_LOCK_SECONDS
TICK = 0.5  # BEAT_TICK_SECONDS


def _beat(env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "arena_site", "beat", "--loglevel=INFO"],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _runs(client: redis.Redis, queue: str) -> list[int]:
    """The sending process id of each scheduled recompute in the queue, oldest first."""
    pids = []
    for raw in reversed(client.lrange(queue, 0, -1)):  # kombu pushes on the left
        headers = json.loads(raw)["headers"]
        if headers["task"] == "leaderboard.tasks.recompute_leaderboard":
            pids.append(int(headers["origin"].split("@")[0].removeprefix("gen")))
    return pids


@pytest.mark.integration
def test_of_two_beats_one_fires_and_the_other_takes_over_when_it_dies(settings, tmp_path):
    if not settings.REDIS_URL:
        pytest.skip("beat's lock lives in Redis")
    tag = uuid.uuid4().hex[:8]
    queue, prefix = f"test-beat-{tag}", f"test-beat-{tag}"
    env = {
        **os.environ,
        "DATABASE_URL": os.environ.get("DATABASE_URL", ""),
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_QUEUE": queue,
        "CACHE_KEY_PREFIX": prefix,
        "RECOMPUTE_INTERVAL_SECONDS": str(INTERVAL),
        "BEAT_LOCK_SECONDS": str(LOCK),
        "BEAT_TICK_SECONDS": str(TICK),
    }
    client = redis.Redis.from_url(settings.REDIS_URL)
    beats = {}
    try:
        for name in ("a", "b"):
            proc = _beat(env, tmp_path / f"beat-{name}.log")
            beats[proc.pid] = proc
        wait_for(lambda: len(_runs(client, queue)) >= 2, timeout=120)
        both_from = time.monotonic()
        start_count = len(_runs(client, queue))
        wait_for(lambda: len(_runs(client, queue)) >= start_count + 8, timeout=120)
        both_seconds = time.monotonic() - both_from
        runs = _runs(client, queue)
        leader = runs[0]
        assert set(runs) == {leader}, "only the lock's holder schedules"
        assert all(p.poll() is None for p in beats.values()), "the other beat waits, alive"
        # One beat: about one run a second; two beats would send about two.
        assert len(runs) - start_count <= both_seconds / INTERVAL + 2

        os.killpg(leader, signal.SIGKILL)
        beats[leader].wait(timeout=30)
        killed = time.monotonic()
        (standby,) = set(beats) - {leader}
        wait_for(lambda: standby in _runs(client, queue), timeout=LOCK + TICK + INTERVAL + 30)
        takeover = time.monotonic() - killed
        print(f"beat takeover after kill -9 of the holder: {takeover:.1f} s (lock {LOCK} s)")
        wait_for(lambda: _runs(client, queue).count(standby) >= 3, timeout=60)
        runs = _runs(client, queue)
        first = runs.index(standby)
        assert set(runs[:first]) == {leader} and set(runs[first:]) == {standby}, (
            "one holder at a time: the leader's runs, then the standby's, never interleaved"
        )
    finally:
        for proc in beats.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=30)
        keys = list(client.scan_iter(f"*{tag}*"))
        if keys:
            client.delete(*keys)
