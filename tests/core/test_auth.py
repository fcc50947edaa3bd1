"""API keys: stored hashed, refused when unknown or revoked, counted; anonymous posting."""

from __future__ import annotations

import json

from core.auth import hash_key
from core.models import ApiClient
from core.services import issue_api_key, revoke_api_key
from ingest.models import Battle
from tests.ingest.payloads import post_vote as post
from tests.ingest.payloads import vote


def test_key_is_stored_hashed(db):
    client, key = issue_api_key(name="ci")
    stored = ApiClient.objects.get(pk=client.pk)
    assert key not in (stored.key_hash, stored.key_prefix)
    assert stored.key_hash == hash_key(key)
    assert key not in json.dumps(list(ApiClient.objects.values()), default=str)


def test_unknown_and_revoked_keys_are_401(api, models):
    client, key = issue_api_key(name="ci")
    api.credentials(HTTP_AUTHORIZATION="Bearer arena_deadbeef_nope")
    assert post(api, vote()).status_code == 401
    revoke_api_key(client=client)
    api.credentials(HTTP_X_API_KEY=key)
    r = post(api, vote())
    assert r.status_code == 401 and "revoked" in r.json()["message"]
    assert Battle.objects.count() == 0


def test_anonymous_posting_can_be_switched_off(api, models, settings):
    settings.ARENA_ALLOW_ANONYMOUS = False
    r = post(api, vote())
    assert r.status_code in (401, 403) and "API key" in r.json()["message"]
    assert Battle.objects.count() == 0


def test_key_usage_is_recorded(keyed_api, models):
    post(keyed_api, vote())
    client = ApiClient.objects.get()
    assert client.last_used_at is not None and client.request_count >= 1
