"""The health check: `live` (this process answers) and `ready` (its dependencies answer).

`GET /healthz?check=live` is 200 whenever the web process can answer at all: the probe a
supervisor restarts a process on. `GET /healthz` (or `?check=ready`) checks the database,
the broker (Redis) and whether a Celery worker wrote a heartbeat within
`WORKER_HEARTBEAT_STALE_SECONDS` (core/heartbeat.py); it is 503 when any of them is down
and says which. Every check has a short timeout, so the probe itself never hangs.
"""

from __future__ import annotations

import redis
from django.conf import settings
from django.db import connection
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

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


HEALTH = inline_serializer(
    "Health",
    {
        "status": serializers.ChoiceField(choices=["ok", "degraded"]),
        "check": serializers.ChoiceField(choices=["live", "ready"]),
        "database": serializers.ChoiceField(choices=["ok", "down"], required=False),
        "broker": serializers.ChoiceField(choices=["ok", "down", "in-process"], required=False),
        "worker": serializers.ChoiceField(
            choices=["ok", "down", "unknown", "in-process"], required=False
        ),
        "worker_heartbeat_age_seconds": serializers.FloatField(allow_null=True, required=False),
    },
)


class HealthView(APIView):
    authentication_classes: list[type[BaseAuthentication]] = []
    permission_classes: list[type[BasePermission]] = []

    @extend_schema(
        summary="Liveness (this process answers) or readiness (database, broker, worker)",
        parameters=[
            OpenApiParameter(
                "check",
                OpenApiTypes.STR,
                enum=["live", "ready"],
                description="live: 200 while the process answers; ready (default): 503 when "
                "the database, the broker or every worker is down.",
            )
        ],
        responses={
            200: HEALTH,
            503: OpenApiResponse(HEALTH, description="A dependency is down (named)."),
        },
        auth=[],
    )
    def get(self, request: Request) -> Response:
        check = request.query_params.get("check", "ready")
        if check not in ("live", "ready"):
            raise ValidationError({"check": ["One of: live, ready."]})
        if check == "live":
            return Response({"status": "ok", "check": "live"})
        db = "ok" if _database_ok() else "down"
        broker = _broker_state()
        worker, age = _worker_state(broker)
        healthy = db == "ok" and broker != "down" and worker in ("ok", "in-process")
        return Response(
            {
                "status": "ok" if healthy else "degraded",
                "check": "ready",
                "database": db,
                "broker": broker,
                "worker": worker,
                "worker_heartbeat_age_seconds": age,
            },
            status=status.HTTP_200_OK if healthy else status.HTTP_503_SERVICE_UNAVAILABLE,
        )
