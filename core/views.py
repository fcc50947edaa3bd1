"""The health check: `live` (this process answers) and `ready` (its dependencies answer).

`GET /healthz?check=live` is 200 whenever the web process can answer at all: the probe a
supervisor restarts a process on. `GET /healthz` (or `?check=ready`) checks the database,
the broker (Redis) and whether a Celery worker wrote a heartbeat within
`WORKER_HEARTBEAT_STALE_SECONDS` (core/heartbeat.py); it is 503 when any of them is down
and says which. The probes are core/selectors.py; each has a short timeout.
"""

from __future__ import annotations

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

from .selectors import readiness

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
        body, healthy = readiness()
        return Response(
            body, status=status.HTTP_200_OK if healthy else status.HTTP_503_SERVICE_UNAVAILABLE
        )
