"""/metrics: who may read it, and that votes, pairs, recomputes, snapshot age and queue depth count.

The counters are read through the endpoint's own text (parsed with prometheus_client's
parser), before and after each action, so a test sees what a scraper sees.
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
import redis
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from leaderboard.models import Snapshot
from leaderboard.recompute import recompute


def scrape(client, **headers) -> dict[tuple[str, tuple], float]:
    r = client.get("/metrics", **headers)
    assert r.status_code == 200, r.content
    assert r["Content-Type"].startswith("text/plain; version=")
    out = {}
    for family in text_string_to_metric_families(r.content.decode()):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(samples, name: str, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def vote(pair_id: str, **extra) -> str:
    body = {
        "pair_id": pair_id,
        "user_id": "machine-1",
        "model_a": "gpt-4o-2024-08-06",
        "model_b": "codestral-2405",
        "outcome": "model_a",
        "privacy": "Private",
    }
    return json.dumps({**body, **extra})


def test_a_client_outside_the_allow_list_is_refused(client, db):
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 403


def test_the_allow_list_sees_the_real_client_behind_the_proxy(client, db, settings):
    settings.TRUSTED_PROXIES = ["127.0.0.1/32"]
    settings.METRICS_ALLOWED_IPS = ["10.1.0.0/16"]
    proxy = {"REMOTE_ADDR": "127.0.0.1"}
    assert client.get("/metrics", HTTP_X_FORWARDED_FOR="10.1.2.3", **proxy).status_code == 200
    assert client.get("/metrics", HTTP_X_FORWARDED_FOR="192.0.2.1", **proxy).status_code == 403


def test_a_token_admits_any_address(client, db, settings):
    settings.METRICS_TOKEN = "s3cret-token"
    far = {"REMOTE_ADDR": "203.0.113.9"}
    assert (
        client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-token", **far).status_code == 200
    )
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong", **far).status_code == 403


def test_votes_are_counted_by_route_and_result(client, models, settings):
    before = scrape(client)
    url, kind = "/api/v1/battles", "application/json"
    assert client.post(url, vote("m-1"), content_type=kind).status_code == 201
    assert client.post(url, vote("m-1"), content_type=kind).status_code == 200
    assert client.post(url, vote("m-2", outcome="nobody"), content_type=kind).status_code == 400
    after = scrape(client)
    for result, n in (("stored", 1), ("duplicate", 1), ("rejected_invalid", 1)):
        gained = value(after, "arena_votes_total", route="battles", result=result) - value(
            before, "arena_votes_total", route="battles", result=result
        )
        assert gained == n, result


def test_throttled_votes_are_counted_as_rejected_throttled(client, models, settings):
    settings.ARENA_THROTTLE_RATES = {**settings.ARENA_THROTTLE_RATES, "vote_ip": "1/min"}
    before = scrape(client)
    url, kind = "/api/v1/battles", "application/json"
    assert client.post(url, vote("t-1"), content_type=kind).status_code == 201
    assert client.post(url, vote("t-2"), content_type=kind).status_code == 429
    after = scrape(client)
    key = {"route": "battles", "result": "rejected_throttled"}
    assert value(after, "arena_votes_total", **key) - value(before, "arena_votes_total", **key) == 1


def test_a_recompute_is_timed_and_the_snapshot_age_is_read_at_scrape(client, models):
    before = scrape(client)
    snapshot = recompute(trigger="test")
    Snapshot.objects.filter(pk=snapshot.pk).update(computed_at=timezone.now() - timedelta(hours=1))
    after = scrape(client)
    key = {"outcome": "published"}
    assert (
        value(after, "arena_recompute_seconds_count", **key)
        - value(before, "arena_recompute_seconds_count", **key)
        == 1
    )
    age = value(after, "arena_snapshot_age_seconds")
    assert 3600 <= age < 3600 + 600


def test_no_published_snapshot_means_no_age_value(client, db):
    assert ("arena_snapshot_age_seconds", ()) not in scrape(client)


def test_celery_queue_depth_is_read_from_the_broker(client, db, settings):
    settings.CELERY_TASK_DEFAULT_QUEUE = queue = f"test-metrics-{uuid.uuid4().hex[:8]}"
    r = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    try:
        r.lpush(queue, "a", "b", "c")
        r.lpush(queue + "\x06\x166", "d")  # a priority-6 message
        assert value(scrape(client), "arena_celery_queue_depth", queue=queue) == 4
    finally:
        r.delete(queue, queue + "\x06\x166")
        r.close()


@pytest.mark.parametrize("path", ["/metrics", "/healthz"])
def test_probes_are_not_redirected_to_https(client, db, settings, path):
    settings.SECURE_SSL_REDIRECT = True
    assert client.get(path).status_code in (200, 503)
    assert client.get("/methodology/").status_code == 301
