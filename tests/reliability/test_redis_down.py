"""With Redis killed or frozen: pages and reads come from the database, votes are stored and
answered 2xx, throttles count in process memory, and a frozen Redis costs one timeout per
process, not one per request (the circuit breaker, core.redis_client)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from core import hotcache
from core.redis_client import breaker
from ingest.models import Battle
from leaderboard.models import RatingConfig
from leaderboard.recompute import recompute
from tests.ingest.payloads import outcome_payload

READS = [
    "/",
    "/methodology/",
    "/slices/?dimension=task_type",
    "/api/v1/leaderboard?category=overall",
    "/api/v1/leaderboard?category=overall&format=csv",
    "/api/v1/categories",
    "/api/v1/slices?dimension=language",
    "/api/v1/correlations",
    "/correlations/",
    "/list_models",
]


@pytest.fixture
def board(on_redis, db):
    config = RatingConfig.current()
    config.rounds, config.slice_rounds = 50, 20
    config.save()
    call_command("simulate_battles", "--battles", "3000", "--seed", "3", stdout=io.StringIO())
    snapshot = recompute(trigger="test")
    hotcache.clear()
    return snapshot


def _vote(i: int) -> dict:
    return {
        "pair_id": f"down-{i}",
        "user_id": f"user-{i}",
        "model_a": "gpt-4o-2024-08-06",
        "model_b": "codestral-2405",
        "outcome": "model_a",
        "privacy": "Private",
        "file_type": "python",
    }


@pytest.mark.parametrize("fault", ["killed", "frozen"])
def test_reads_come_from_the_database(client, board, on_redis, fault):
    warm = {url: client.get(url) for url in READS}  # cached while Redis is up
    assert all(r.status_code < 500 for r in warm.values())
    hotcache.clear()  # a fresh process: nothing in its memo
    on_redis.kill() if fault == "killed" else on_redis.freeze()
    for url in READS:
        r = client.get(url)
        assert r.status_code == warm[url].status_code, (url, r.status_code, r.content[:300])
        assert r.content == warm[url].content, url
    key = board.slices.get(key="overall").rows.filter(public=True).first().model.key
    assert client.get(f"/models/{key}/").status_code == 200
    # The first call that met the dead Redis opened the breaker; no request after it tried.
    assert breaker.current_state == "open" and breaker.fail_counter == 1


@pytest.mark.parametrize("fault", ["killed", "frozen"])
def test_votes_are_stored_and_answered_2xx(api, keyed_api, models, on_redis, settings, fault):
    settings.RECOMPUTE_ON_VOTES = True  # the trigger must not fail the vote either
    settings.CELERY_TASK_ALWAYS_EAGER = False
    on_redis.kill() if fault == "killed" else on_redis.freeze()
    r = keyed_api.post(
        "/api/v1/battles", data=json.dumps(_vote(1)), content_type="application/json"
    )
    assert r.status_code == 201, r.content
    body = outcome_payload(pairId="down-ext")
    r = api.put("/add_completion_outcome", data=json.dumps(body), content_type="application/json")
    assert r.status_code == 200, r.content
    batch = {"battles": [_vote(i) for i in range(2, 12)]}
    r = keyed_api.post(
        "/api/v1/battles/batch", data=json.dumps(batch), content_type="application/json"
    )
    assert r.status_code == 201, r.content
    assert Battle.objects.filter(pair_id__startswith="down-").count() == 12
    assert breaker.current_state == "open" and breaker.fail_counter == 1


def test_throttles_fall_back_to_process_memory(api, models, on_redis, settings):
    settings.ARENA_THROTTLE_RATES = {**settings.ARENA_THROTTLE_RATES, "vote_ip": "2/min"}
    on_redis.kill()
    codes = [
        api.post(
            "/api/v1/battles", data=json.dumps(_vote(i)), content_type="application/json"
        ).status_code
        for i in range(3)
    ]
    assert codes == [201, 201, 429]


def test_reads_use_redis_again_once_it_is_back(client, board, on_redis, settings):
    on_redis.freeze()
    assert client.get("/api/v1/categories").status_code == 200
    assert breaker.current_state == "open"
    on_redis.thaw()
    breaker.reset_timeout = 0  # the next call is the probe
    assert client.get("/api/v1/categories").status_code == 200
    assert breaker.current_state == "closed"
