"""A lock that makes concurrent recompute triggers run one recompute, not several.

With Redis it is a Redis lock (shared by every worker); in the embedded setup (no Redis,
everything in one process) it is a process-local lock.
"""

from __future__ import annotations

import contextlib
import threading
from contextlib import contextmanager

import redis
from django.conf import settings

_local = threading.Lock()


@contextmanager
def single_flight(name: str, *, timeout: int):
    """Yield True if this caller holds the lock, False if someone else does (never blocks)."""
    if not settings.REDIS_URL:
        acquired = _local.acquire(blocking=False)
        try:
            yield acquired
        finally:
            if acquired:
                _local.release()
        return
    client = redis.Redis.from_url(settings.REDIS_URL)
    lock = client.lock(f"arena:lock:{name}", timeout=timeout)
    acquired = lock.acquire(blocking=False)
    try:
        yield acquired
    finally:
        if acquired:
            # LockError: it expired while we worked, and someone else may hold it now.
            with contextlib.suppress(redis.exceptions.LockError):
                lock.release()
