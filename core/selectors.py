"""Reads of core: whether the site's dependencies answer (the readiness check of /healthz).

Every probe has a short timeout, so the check itself never hangs.
"""

from __future__ import annotations

import redis
from django.conf import settings
from django.db import connection

from .heartbeat import newest_beat_age
from .redis_client import REDIS_ERRORS, timeouts


def _database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except Exception:
        return False


def _broker_state() -> str:
    if not settings.REDIS_URL:
        return "in-process"
    try:
        redis.Redis.from_url(settings.REDIS_URL, **timeouts()).ping()
        return "ok"
    except Exception:
        return "down"


def _worker_state(broker: str) -> tuple[str, float | None]:
    if broker == "in-process":
        return "in-process", None
    if broker == "down":
        return "unknown", None  # the heartbeat lives in Redis
    try:
        age = newest_beat_age()
    except REDIS_ERRORS:
        return "unknown", None
    if age is None or age > settings.WORKER_HEARTBEAT_STALE_SECONDS:
        return "down", None if age is None else round(age, 1)
    return "ok", round(age, 1)


def readiness() -> tuple[dict[str, object], bool]:
    """The `ready` answer of /healthz (database, broker, worker) and whether all is well."""
    db = "ok" if _database_ok() else "down"
    broker = _broker_state()
    worker, age = _worker_state(broker)
    healthy = db == "ok" and broker != "down" and worker in ("ok", "in-process")
    body: dict[str, object] = {
        "status": "ok" if healthy else "degraded",
        "check": "ready",
        "database": db,
        "broker": broker,
        "worker": worker,
        "worker_heartbeat_age_seconds": age,
    }
    return body, healthy
