"""API keys (hashed, revocable, lift limits) and throttling (429 per IP and per user)."""

from __future__ import annotations

import json

from core.auth import hash_key
from core.models import ApiClient
from core.services import issue_api_key, revoke_api_key
from ingest.models import Battle
from tests.ingest.test_native_api import vote


def post(client, body):
    return client.post("/api/v1/battles", data=json.dumps(body), content_type="application/json")


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


def test_per_user_throttle_answers_429(api, models, settings):
    settings.ARENA_THROTTLE_RATES = {**settings.ARENA_THROTTLE_RATES, "vote_user": "3/min"}
    codes = [post(api, vote(pair_id=f"t-{i}")).status_code for i in range(5)]
    assert codes == [201, 201, 201, 429, 429]
    r = post(api, vote(pair_id="t-9"))
    assert "Retry-After" in r.headers
    # another user from the same IP is not limited by the per-user rate
    assert post(api, vote(pair_id="t-10", user_id="someone-else")).status_code == 201
    assert Battle.objects.count() == 4


def test_per_ip_throttle_answers_429(api, models, settings):
    settings.ARENA_THROTTLE_RATES = {**settings.ARENA_THROTTLE_RATES, "vote_ip": "2/min"}
    codes = [post(api, vote(pair_id=f"i-{i}", user_id=f"u{i}")).status_code for i in range(4)]
    assert codes == [201, 201, 429, 429]


def test_api_key_lifts_anonymous_limits(keyed_api, models, settings):
    settings.ARENA_THROTTLE_RATES = {
        **settings.ARENA_THROTTLE_RATES,
        "vote_ip": "1/min",
        "vote_user": "1/min",
    }
    codes = {post(keyed_api, vote(pair_id=f"k-{i}")).status_code for i in range(5)}
    assert codes == {201}


def test_per_key_limit(api, models):
    _client, key = issue_api_key(name="slow", rate_limit_per_minute=2)
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    codes = [post(api, vote(pair_id=f"s-{i}")).status_code for i in range(3)]
    assert codes == [201, 201, 429]


def test_key_usage_is_recorded(keyed_api, models):
    post(keyed_api, vote())
    client = ApiClient.objects.get()
    assert client.last_used_at is not None and client.request_count >= 1
