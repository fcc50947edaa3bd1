"""`GET /metrics`: the Prometheus text format, for the addresses in METRICS_ALLOWED_IPS.

Counted where things happen (`core/metrics.py` names them): votes by route and result,
pair requests, provider latency per model, recompute duration. Read here at each scrape:
the age of the published snapshot (one indexed query) and the depth of the Celery queue
(LLEN on the broker). Under gunicorn (and with the worker) PROMETHEUS_MULTIPROC_DIR makes
every process write its values to files that the multiprocess collector adds up, so any
web process answers for all of them (docs/deployment.md, "Metrics").

Access: a client address (`core.client_ip`, so the real client behind nginx) inside one
of METRICS_ALLOWED_IPS, or `Authorization: Bearer <METRICS_TOKEN>` when a token is set;
anything else gets 403.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Iterator

import redis
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.multiprocess import MultiProcessCollector

from core.client_ip import client_ip
from leaderboard.models import Snapshot

# Celery's Redis transport keeps a queue's messages of priority p > 0 in "<queue>\x06\x16<p>".
_PRIORITY_SUFFIXES = ("", "\x06\x163", "\x06\x166", "\x06\x169")


def _allowed(request: HttpRequest) -> bool:
    token = settings.METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "")
        if hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return True
    ip = client_ip(request)
    if not ip:
        return False
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return False
    return any(
        address in ipaddress.ip_network(net, strict=False) for net in settings.METRICS_ALLOWED_IPS
    )


class ScrapeTimeCollector:
    """Values read when scraped rather than counted: snapshot age, Celery queue depth."""

    def collect(self) -> Iterator[Metric]:
        age = GaugeMetricFamily(
            "arena_snapshot_age_seconds",
            "Seconds since the published leaderboard snapshot was computed (absent: none yet).",
        )
        computed = (
            Snapshot.objects.filter(status=Snapshot.Status.PUBLISHED)
            .order_by("-computed_at")
            .values_list("computed_at", flat=True)
            .first()
        )
        if computed is not None:
            age.add_metric([], (timezone.now() - computed).total_seconds())
        yield age
        if settings.REDIS_URL:
            depth = GaugeMetricFamily(
                "arena_celery_queue_depth",
                "Tasks waiting in the Celery queue on the broker (not yet taken by a worker).",
                labels=["queue"],
            )
            queue = settings.CELERY_TASK_DEFAULT_QUEUE
            try:
                client = redis.Redis.from_url(
                    settings.CELERY_BROKER_URL, socket_timeout=2, socket_connect_timeout=2
                )
                with client.pipeline(transaction=False) as pipe:
                    for suffix in _PRIORITY_SUFFIXES:
                        pipe.llen(queue + suffix)
                    waiting = sum(pipe.execute())
                client.close()
            except redis.RedisError:
                pass  # broker down: no value (healthz says so); the scrape still answers
            else:
                depth.add_metric([queue], float(waiting))
                yield depth


def _registry() -> CollectorRegistry:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]  # untyped library
        return registry
    return REGISTRY


def metrics_view(request: HttpRequest) -> HttpResponse:
    if not _allowed(request):
        return HttpResponse(
            "Forbidden: /metrics answers the addresses in METRICS_ALLOWED_IPS "
            "(or a METRICS_TOKEN bearer token).\n",
            status=403,
            content_type="text/plain",
        )
    scraped = CollectorRegistry()
    scraped.register(ScrapeTimeCollector())
    body = generate_latest(_registry()) + generate_latest(scraped)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
