"""A counting semaphore per provider, shared by every worker: at most N evaluation calls in flight.

Serving's engine limits calls per web process and refuses (``busy``) beyond the limit; an
evaluation should instead wait its turn, and its limit must hold across all Celery worker
processes and machines. So each provider has a Redis sorted set of holders, scored by the
time their slot expires (`core.semaphore`):

* acquire (one Lua script, atomic): drop expired holders; if fewer than ``limit`` remain,
  add this holder with expiry ``now + lease`` and succeed; else fail and the caller polls
  again after a short, growing pause;
* release: remove the holder.

A holder that dies without releasing (a killed worker) frees its slot when the lease ends;
the lease is the call's timeout plus a margin, so a live call is never counted out. The
clock is Redis's own (``TIME``), the same for every worker. Without Redis (the embedded
setup: one process) a process-local semaphore per key does the same.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, cast

from core.redis_client import shared_redis
from core.semaphore import ACQUIRE
from core.semaphore import semaphore_key as _key

# The acquire script per client (registering hashes it; the client is one per process).
_scripts: dict[int, Any] = {}
_local_guard = threading.Lock()
_local: dict[str, tuple[int, threading.BoundedSemaphore]] = {}


class SemaphoreTimeout(Exception):
    """No slot became free within the wait limit."""


def semaphore_key(name: str) -> str:
    return _key("evalsem", name)


def _local_semaphore(name: str, limit: int) -> threading.BoundedSemaphore:
    with _local_guard:
        known = _local.get(name)
        if known is None or known[0] != limit:
            known = (limit, threading.BoundedSemaphore(limit))
            _local[name] = known
        return known[1]


def holders(name: str) -> int:
    """Slots of ``name`` held now (expired ones not counted); for tests and the admin."""
    client = shared_redis()
    if client is None:
        return 0
    key = semaphore_key(name)
    seconds, micros = cast(tuple[int, int], client.time())
    return int(cast(int, client.zcount(key, seconds + micros / 1e6, "+inf")))


@contextlib.contextmanager
def slot(
    name: str,
    *,
    limit: int,
    lease_s: float,
    max_wait_s: float = 3600.0,
    should_stop: Callable[[], bool] | None = None,
) -> Iterator[None]:
    """Hold one of ``limit`` slots of ``name`` for the body's duration (waiting for one)."""
    client = shared_redis()
    if client is None:
        sem = _local_semaphore(name, limit)
        if not sem.acquire(timeout=max_wait_s):
            raise SemaphoreTimeout(name)
        try:
            yield
        finally:
            sem.release()
        return
    key = semaphore_key(name)
    token = uuid.uuid4().hex
    script = _scripts.get(id(client))
    if script is None:
        script = _scripts[id(client)] = client.register_script(ACQUIRE)
    deadline = time.monotonic() + max_wait_s
    pause = 0.02
    while not script(keys=[key], args=[limit, lease_s, token]):
        if time.monotonic() > deadline or (should_stop is not None and should_stop()):
            raise SemaphoreTimeout(name)
        time.sleep(pause)  # production back-off between polls, not a test wait
        pause = min(pause * 1.5, 0.5)
    try:
        yield
    finally:
        client.zrem(key, token)
