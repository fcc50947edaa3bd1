"""One client IP for throttles and storage, honouring NUM_PROXIES; forged hops never count."""

from __future__ import annotations

import json

from django.test import RequestFactory

from core.client_ip import client_ip
from ingest.models import Battle
from ingest.pseudonyms import pseudonymise_ip
from tests.ingest.payloads import vote

PROXY = "10.0.0.2"


def post(api, body, *, forwarded: str):
    return api.post(
        "/api/v1/battles",
        data=json.dumps(body),
        content_type="application/json",
        REMOTE_ADDR=PROXY,
        HTTP_X_FORWARDED_FOR=forwarded,
    )


def test_header_is_ignored_without_trusted_proxies(settings):
    settings.NUM_PROXIES = 0
    request = RequestFactory().get("/", REMOTE_ADDR="198.51.100.9", HTTP_X_FORWARDED_FOR="1.2.3.4")
    assert client_ip(request) == "198.51.100.9"


def test_the_hop_the_trusted_proxy_appended_is_taken(settings):
    request = RequestFactory().get(
        "/", REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7, 10.0.0.1"
    )
    settings.NUM_PROXIES = 1
    assert client_ip(request) == "10.0.0.1"
    settings.NUM_PROXIES = 2
    assert client_ip(request) == "203.0.113.7"
    settings.NUM_PROXIES = 9  # more proxies than hops: the leftmost one
    assert client_ip(request) == "6.6.6.6"


def test_stored_ip_and_throttle_both_use_the_real_client(api, models, settings):
    settings.NUM_PROXIES = 1
    settings.ARENA_THROTTLE_RATES = {**settings.ARENA_THROTTLE_RATES, "vote_ip": "2/min"}
    # The client forges a different leftmost hop each time; nginx appends the real address.
    codes = [
        post(
            api, vote(pair_id=f"f-{i}", user_id=f"u{i}"), forwarded=f"6.6.6.{i}, 203.0.113.7"
        ).status_code
        for i in range(3)
    ]
    assert codes == [201, 201, 429]
    hashes = set(Battle.objects.values_list("ip_hash", flat=True))
    assert hashes == {pseudonymise_ip("203.0.113.7")}
    assert pseudonymise_ip(PROXY) not in hashes
    # Another real client behind the same proxy has its own allowance.
    other = post(api, vote(pair_id="g-1", user_id="g"), forwarded="203.0.113.8")
    assert other.status_code == 201
    assert Battle.objects.get(pair_id="g-1").ip_hash == pseudonymise_ip("203.0.113.8")
