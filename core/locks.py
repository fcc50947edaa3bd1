"""Named locks that keep a job to one run at a time ("recompute", "relabel", ...), held as leases.

With Redis it is a Redis lock shared by every worker, under the cache's key prefix (several
sites may share one Redis); in the embedded setup (no Redis, everything in one process) it
is a process-local lock. Either way each name is its own lock: holding "relabel" never
blocks "recompute".

On Redis the lock is a *lease*: it expires `timeout` seconds after it was last renewed, and
a thread of the holder renews it every third of that while the job runs. A holder that dies
(`kill -9`, a lost machine) stops renewing, so its lock is gone within `timeout` seconds
instead of blocking every later run for a job's whole worst-case length. `held(name)` tells
whether anyone holds it now (the admin's "running").
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import redis
from django.conf import settings

from .redis_client import REDIS_ERRORS, key_prefix, shared_redis

log = logging.getLogger(__name__)

_local_guard = threading.Lock()
_local: dict[str, threading.Lock] = {}


def lock_key(name: str) -> str:
    return f"{key_prefix()}:lock:{name}"


def _local_lock(name: str) -> threading.Lock:
    with _local_guard:
        return _local.setdefault(name, threading.Lock())


def held(name: str) -> bool | None:
    """Whether the lock `name` is held right now; None when Redis cannot tell."""
    client = shared_redis() if settings.REDIS_URL else None
    if client is None:
        return _local_lock(name).locked()
    try:
        return bool(client.exists(lock_key(name)))
    except REDIS_ERRORS:
        return None


class _Renewer(threading.Thread):
    """Extends a Redis lock's lease every `every` seconds until stopped."""

    def __init__(self, lock: redis.lock.Lock, every: float, name: str) -> None:
        super().__init__(name=f"lease-{name}", daemon=True)
        self.lock, self.every, self.lock_name = lock, every, name
        self.stopped = threading.Event()
        self.lost = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.every):
            try:
                self.lock.reacquire()
            except redis.exceptions.LockError:
                # Expired (Redis frozen or restarted longer than the lease): another run
                # may take it now; this one finishes, and publishing is atomic anyway.
                log.warning("Lease of lock %r lost while running", self.lock_name)
                self.lost.set()
                return
            except REDIS_ERRORS:
                log.warning("Could not renew the lease of lock %r; trying again", self.lock_name)


@contextmanager
def single_flight(name: str, *, timeout: int) -> Iterator[bool]:
    """Yield True if this caller holds the lock `name`, False if someone else does (never blocks).

    `timeout` is the lease: how long the lock outlives a holder that stopped renewing it.
    """
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
    # thread_local=False: the renewer thread extends the lease with the same token.
    redis_lock = client.lock(lock_key(name), timeout=timeout, thread_local=False)
    acquired = redis_lock.acquire(blocking=False)
    renewer = _Renewer(redis_lock, max(timeout / 3, 0.1), name) if acquired else None
    if renewer is not None:
        renewer.start()
    try:
        yield acquired
    finally:
        if renewer is not None:
            renewer.stopped.set()
            renewer.join(timeout=5)
            # LockError: it expired while we worked, and someone else may hold it now.
            with contextlib.suppress(redis.exceptions.LockError, *REDIS_ERRORS):
                redis_lock.release()
