"""Named locks that keep a job to one run at a time ("recompute", "relabel", ...).

With Redis it is a Redis lock shared by every worker, under the cache's key prefix (several
sites may share one Redis); in the embedded setup (no Redis, everything in one process) it
is a process-local lock. Either way each name is its own lock: holding "relabel" never
blocks "recompute".
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import redis
from django.conf import settings

from .redis_client import key_prefix, shared_redis

_local_guard = threading.Lock()
_local: dict[str, threading.Lock] = {}


def lock_key(name: str) -> str:
    return f"{key_prefix()}:lock:{name}"


def _local_lock(name: str) -> threading.Lock:
    with _local_guard:
        return _local.setdefault(name, threading.Lock())


@contextmanager
def single_flight(name: str, *, timeout: int) -> Iterator[bool]:
    """Yield True if this caller holds the lock `name`, False if someone else does (never blocks)."""
    client = shared_redis() if settings.REDIS_URL else None
    if client is None:
        lock = _local_lock(name)
        acquired = lock.acquire(blocking=False)
        try:
            yield acquired
        finally:
            if acquired:
                lock.release()
        return
    redis_lock = client.lock(lock_key(name), timeout=timeout)
    acquired = redis_lock.acquire(blocking=False)
    try:
        yield acquired
    finally:
        if acquired:
            # LockError: it expired while we worked, and someone else may hold it now.
            with contextlib.suppress(redis.exceptions.LockError):
                redis_lock.release()
