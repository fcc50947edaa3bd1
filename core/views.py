"""The health check: whether the database and the broker answer."""

from __future__ import annotations

import redis
from django.conf import settings
from django.db import connection
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView


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
        redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1, socket_connect_timeout=1).ping()
        return "ok"
    except Exception:
        return "down"


class HealthView(APIView):
    authentication_classes: list = []
    permission_classes: list = []

    @extend_schema(
        summary="Whether the database and the broker answer", responses={200: dict, 503: dict}
    )
    def get(self, request):
        db = "ok" if _database_ok() else "down"
        broker = _broker_state()
        healthy = db == "ok" and broker != "down"
        return Response(
            {"status": "ok" if healthy else "degraded", "database": db, "broker": broker},
            status=status.HTTP_200_OK if healthy else status.HTTP_503_SERVICE_UNAVAILABLE,
        )
