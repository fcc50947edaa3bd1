"""/healthz: live is 200 while the process answers; ready names the dependency that is down,
including a worker whose heartbeat went stale."""

from __future__ import annotations

import time

import pytest

from core.heartbeat import beat, newest_beat_age
from core.redis_client import key_prefix, shared_redis


@pytest.fixture
def fresh_worker(db):
    client = shared_redis()
    for key in client.scan_iter(match=f"{key_prefix()}:worker-beat:*"):
        client.delete(key)
    beat("celery@test")
    yield
    for key in client.scan_iter(match=f"{key_prefix()}:worker-beat:*"):
        client.delete(key)


def test_ready_when_database_broker_and_worker_answer(api, fresh_worker):
    r = api.get("/healthz")
    assert r.status_code == 200, r.json()
    body = r.json()
    assert (body["status"], body["database"], body["broker"], body["worker"]) == (
        "ok",
        "ok",
        "ok",
        "ok",
    )


def test_stale_heartbeat_is_worker_down_503_ready_200_live(api, fresh_worker, settings):
    client = shared_redis()
    key = f"{key_prefix()}:worker-beat:celery@test"
    client.set(key, f"{time.time() - 3600:.3f}")
    settings.WORKER_HEARTBEAT_STALE_SECONDS = 30
    r = api.get("/healthz?check=ready")
    assert r.status_code == 503 and r.json()["worker"] == "down"
    assert api.get("/healthz?check=live").status_code == 200
    assert newest_beat_age() > 3000


def test_no_worker_ever_is_down(api, db):
    client = shared_redis()
    for key in client.scan_iter(match=f"{key_prefix()}:worker-beat:*"):
        client.delete(key)
    r = api.get("/healthz")
    assert r.status_code == 503 and r.json()["worker"] == "down"


def test_broker_down_is_named(api, db, on_redis):
    on_redis.kill()
    r = api.get("/healthz")
    assert r.status_code == 503
    assert r.json()["broker"] == "down" and r.json()["database"] == "ok"
    assert api.get("/healthz?check=live").status_code == 200


def test_unknown_check_is_400(api, db):
    r = api.get("/healthz?check=deep")
    assert r.status_code == 400 and "check" in r.json()["message"]
