"""The retry policy of Celery tasks whose database went away for a moment (a restart, a
failover, a dropped connection): retried with a growing delay, never on any other error."""

from __future__ import annotations

from typing import Any

from django.db import InterfaceError, OperationalError

# `shared_task(**DB_RETRY, retry_backoff_max=..., max_retries=...)`: each task says how long
# it may keep trying.
DB_RETRY: dict[str, Any] = {
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": 5,
}
