"""Board reads from a PostgreSQL read replica, when `DATABASE_REPLICA_URL` names one.

Only the published snapshot tables go there (`REPLICA_TABLES`: what the board pages and the
read API show), and only inside a GET or HEAD request outside the admin
(`ReplicaReadsMiddleware` marks it). Everything else reads and writes the primary: votes,
the admin, Celery tasks, and above all the count tables, which are UNLOGGED -- a replica
has none of their rows (docs/scaling.md, "Running on several machines"). A replica lags the
primary by its replay delay, so a new board reaches the replica's readers that much later;
the snapshot id in the ETag keeps every cache consistent with what was read.

Without a replica nothing is routed: `DATABASE_ROUTERS` is set only with one (settings.py).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

from django.db.models import Model
from django.http import HttpRequest, HttpResponse

REPLICA = "replica"
# app_label.model_name of the published board (leaderboard's snapshot models).
REPLICA_TABLES = frozenset(
    {"leaderboard.snapshot", "leaderboard.snapshotslice", "leaderboard.snapshotrow"}
)

_reading = contextvars.ContextVar("replica_reads", default=False)


class ReplicaRouter:
    def db_for_read(self, model: type[Model], **hints: Any) -> str | None:
        if _reading.get() and model._meta.label_lower in REPLICA_TABLES:
            return REPLICA
        return None

    def db_for_write(self, model: type[Model], **hints: Any) -> str | None:
        return "default"

    def allow_relation(self, obj1: Model, obj2: Model, **hints: Any) -> bool | None:
        return True  # the replica is a copy of the primary: the same rows

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool | None:
        return db != REPLICA  # a replica follows its primary's schema


class ReplicaReadsMiddleware:
    """GET and HEAD requests outside the admin read the board from the replica."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method not in ("GET", "HEAD") or request.path.startswith("/admin/"):
            return self.get_response(request)
        token = _reading.set(True)
        try:
            return self.get_response(request)
        finally:
            _reading.reset(token)
