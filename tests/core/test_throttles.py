"""Throttling: 429 per IP, per user and per API key; an API key lifts the anonymous limits."""

from __future__ import annotations

from core.services import issue_api_key
from ingest.models import Battle
from tests.ingest.payloads import post_vote as post
from tests.ingest.payloads import vote


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
