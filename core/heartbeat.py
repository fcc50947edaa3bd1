"""The Celery worker's heartbeat: a timestamp in Redis that `/healthz` reads to tell whether a worker is alive.

A consumer bootstep (`WorkerHeartbeat`, registered in `arena_site/celery.py`) writes the
time every `WORKER_HEARTBEAT_SECONDS` from the worker's own event loop, so a worker that
died, lost its broker or stopped consuming stops writing. `/healthz` calls the worker down
once the newest beat is older than `WORKER_HEARTBEAT_STALE_SECONDS`. Each worker writes its
own key (`<prefix>:worker-beat:<hostname>`) with an expiry, so a worker that went away for
good disappears on its own.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery import bootsteps
from celery.worker.consumer import Consumer
from django.conf import settings

from .redis_client import REDIS_ERRORS, key_prefix, shared_redis

log = logging.getLogger(__name__)


def _pattern() -> str:
    return f"{key_prefix()}:worker-beat:*"


def beat(hostname: str) -> None:
    """Write this worker's heartbeat now (errors are the caller's)."""
    client = shared_redis()
    if client is None:
        return
    stale = int(settings.WORKER_HEARTBEAT_STALE_SECONDS)
    client.set(f"{key_prefix()}:worker-beat:{hostname}", f"{time.time():.3f}", ex=stale * 4)


def newest_beat_age() -> float | None:
    """Seconds since the newest worker heartbeat; None if there is none. Raises on Redis errors."""
    client = shared_redis()
    if client is None:
        return None
    keys = list(client.scan_iter(match=_pattern(), count=100))
    if not keys:
        return None
    raw: list[bytes | None] = client.mget(keys)  # type: ignore[assignment]  # sync client: a list
    values = [float(v) for v in raw if v is not None]
    return time.time() - max(values) if values else None


class WorkerHeartbeat(bootsteps.StartStopStep):
    """Consumer step: beat once at start, then on the consumer's timer."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent: Consumer, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.tref: Any = None  # the timer entry (kombu leaves it unannotated)

    def start(self, parent: Consumer) -> None:
        hostname = parent.hostname

        def write() -> None:
            try:
                beat(hostname)
            except REDIS_ERRORS as exc:
                log.warning("Worker heartbeat not written: %s", type(exc).__name__)

        write()
        self.tref = parent.timer.call_repeatedly(settings.WORKER_HEARTBEAT_SECONDS, write)

    def stop(self, parent: Consumer) -> None:
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None
