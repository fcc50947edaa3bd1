"""With PostgreSQL unreachable every route answers 503 in the JSON error shape with Retry-After."""

from __future__ import annotations

import json

import pytest
from django.db import OperationalError
from django.db.backends.base.base import BaseDatabaseWrapper

from core import hotcache
from core.auth import KEY_TAG
from tests.ingest.payloads import outcome_payload

VOTE = {
    "pair_id": "db-down-1",
    "user_id": "u",
    "model_a": "gpt-4o-2024-08-06",
    "model_b": "codestral-2405",
    "outcome": "model_a",
}


@pytest.fixture
def database_down(db, settings):
    from catalogue.selectors import clear_catalogue_cache

    settings.ARENA_RETRY_AFTER_SECONDS = 7
    clear_catalogue_cache()
    hotcache.clear()

    def refuse(self):
        raise OperationalError('connection to server at "127.0.0.1", port 5432 failed')

    # Undone here, before the db fixture rolls the test's transaction back.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BaseDatabaseWrapper, "ensure_connection", refuse)
        patch.setattr(BaseDatabaseWrapper, "is_usable", lambda self: False)
        yield


def _assert_503(r):
    assert r.status_code == 503, (r.status_code, r.content[:300])
    assert r["Content-Type"].startswith("application/json")
    assert r["Retry-After"] == "7"
    body = r.json()
    assert body["error"] == "unavailable" and body["message"]


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/methodology/",
        "/models/gpt-4o-2024-08-06/",
        "/slices/",
        "/api/v1/leaderboard",
        "/api/v1/categories",
        "/api/v1/slices",
        "/list_models",
        "/correlations/",
    ],
)
def test_reads_answer_503(client, database_down, url):
    _assert_503(client.get(url))


def test_votes_answer_503(api, database_down):
    _assert_503(api.post("/api/v1/battles", data=json.dumps(VOTE), content_type="application/json"))
    _assert_503(
        api.put(
            "/add_completion_outcome",
            data=json.dumps(outcome_payload()),
            content_type="application/json",
        )
    )
    _assert_503(
        api.post(
            "/api/v1/battles",
            data=json.dumps(VOTE),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {KEY_TAG}_abcdef_" + "k" * 40,
        )
    )


def test_health_names_the_database(api, database_down):
    r = api.get("/healthz")
    assert r.status_code == 503
    assert r.json()["database"] == "down"
    assert api.get("/healthz?check=live").status_code == 200
