"""One client IP for throttles and storage: X-Forwarded-For only from TRUSTED_PROXIES.

A request straight from a client (not a listed proxy) is its socket address whatever its
headers say; through a trusted proxy it is the first hop, from the right, that is not one
of our proxies, so addresses a client wrote at the left never count.
"""

from __future__ import annotations

import json

import pytest
from django.test import RequestFactory

from core.client_ip import client_ip
from ingest.models import Battle
from ingest.pseudonyms import pseudonymise_ip
from tests.ingest.payloads import vote

PROXY = "10.0.0.2"


def ip(remote: str, forwarded: str | None = None) -> str | None:
    extra = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    return client_ip(RequestFactory().get("/", REMOTE_ADDR=remote, **extra))


def post(api, body, *, forwarded: str, remote: str = PROXY):
    return api.post(
        "/api/v1/battles",
        data=json.dumps(body),
        content_type="application/json",
        REMOTE_ADDR=remote,
        HTTP_X_FORWARDED_FOR=forwarded,
    )


def test_the_header_is_ignored_without_trusted_proxies(settings):
    settings.TRUSTED_PROXIES = []
    assert ip("198.51.100.9", "1.2.3.4") == "198.51.100.9"
    assert ip(PROXY, "1.2.3.4") == PROXY


def test_the_header_is_ignored_from_a_peer_that_is_not_a_trusted_proxy(settings):
    settings.TRUSTED_PROXIES = ["127.0.0.1/32", "::1/128"]
    # A client talking to gunicorn directly and claiming to be nginx's neighbour.
    assert ip("198.51.100.9", "127.0.0.1") == "198.51.100.9"
    assert ip("198.51.100.9", "203.0.113.7, 127.0.0.1") == "198.51.100.9"


@pytest.mark.parametrize(
    ("forwarded", "expected"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("6.6.6.6, 203.0.113.7", "203.0.113.7"),  # a forged hop at the left never counts
        ("6.6.6.6, 203.0.113.7, 10.0.0.1", "203.0.113.7"),  # a CDN hop of ours is skipped
        ("not-an-ip, 203.0.113.7", "203.0.113.7"),
        ("203.0.113.7, garbage", PROXY),  # a broken proxy: the peer stands
        ("10.0.0.5, 10.0.0.1", "10.0.0.5"),  # only our own hops: the first of them
        ("[2001:db8::7]:443", "2001:db8::7"),
        ("203.0.113.7:5555", "203.0.113.7"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
    ],
)
def test_through_trusted_proxies_the_first_untrusted_hop_from_the_right(
    settings, forwarded, expected
):
    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]
    assert ip(PROXY, forwarded) == expected


def test_x_forwarded_proto_only_from_a_trusted_proxy(client, db, settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/24"]
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    direct = client.get("/methodology/", REMOTE_ADDR="198.51.100.9", HTTP_X_FORWARDED_PROTO="https")
    assert direct.status_code == 301  # not believed: Django sees http and redirects
    proxied = client.get("/methodology/", REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_PROTO="https")
    assert proxied.status_code == 200  # believed: https, served


def test_stored_ip_and_throttle_both_use_the_real_client(api, models, settings):
    settings.TRUSTED_PROXIES = [f"{PROXY}/32"]
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


def test_a_spoofed_header_sent_straight_to_the_pool_is_not_believed(api, models, settings):
    settings.TRUSTED_PROXIES = ["127.0.0.1/32"]
    settings.ARENA_THROTTLE_RATES = {**settings.ARENA_THROTTLE_RATES, "vote_ip": "2/min"}
    codes = [
        post(
            api,
            vote(pair_id=f"s-{i}", user_id=f"s{i}"),
            forwarded="127.0.0.1",
            remote="198.51.100.9",
        ).status_code
        for i in range(3)
    ]
    assert codes == [201, 201, 429]
    assert set(Battle.objects.values_list("ip_hash", flat=True)) == {
        pseudonymise_ip("198.51.100.9")
    }
