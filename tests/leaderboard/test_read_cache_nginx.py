"""The shipped nginx read cache (deploy/nginx-read-cache.conf) in front of the live app.

A real nginx (Debian's, as in the deployment smoke test) with the config assembled by
deploy/read_cache.py: stored answers and client revalidations are served by nginx itself,
stale copies are revalidated with the ETag, and a new snapshot reaches clients.
"""

from __future__ import annotations

import http.client
import importlib.util
import socket
import sys
import time
from pathlib import Path

import pytest

from .test_http_cache import publish

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("read_cache", ROOT / "deploy" / "read_cache.py")
assert _spec and _spec.loader
read_cache = importlib.util.module_from_spec(_spec)
sys.modules["read_cache"] = read_cache
_spec.loader.exec_module(read_cache)

pytestmark = pytest.mark.django_db(transaction=True)

API = "/api/v1/categories"  # answers 200 from a snapshot without boards


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def proxy(live_server, tmp_path, settings):
    # The polls below ask as fast as answers come: the read throttle must not answer 429.
    settings.ARENA_THROTTLE_RATES = {**settings.ARENA_THROTTLE_RATES, "read_ip": "1000000/min"}
    port = _free_port()
    origin = int(live_server.url.rsplit(":", 1)[1])
    proc = read_cache.start(origin_port=origin, port=port, prefix=tmp_path / "nginx")
    yield port, origin
    proc.terminate()
    proc.wait(timeout=30)


def get(port: int, path: str, **headers: str) -> tuple[int, http.client.HTTPMessage]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path, headers={k.replace("_", "-"): v for k, v in headers.items()})
        r = conn.getresponse()
        r.read()
        return r.status, r.headers
    finally:
        conn.close()


def poll(port: int, path: str, until, deadline: float = 60.0) -> http.client.HTTPMessage:
    end = time.monotonic() + deadline
    seen = []
    while time.monotonic() < end:
        status, headers = get(port, path)
        seen.append((status, headers.get("X-Cache-Status"), headers.get("ETag")))
        if until(status, headers):
            return headers
    raise AssertionError(f"never reached: last answers {seen[-5:]}")


def test_nginx_answers_stored_reads_and_revalidations_itself(proxy, settings):
    port, origin = proxy
    settings.ARENA_READ_MAX_AGE = 3600
    publish()
    status, first = get(port, API)
    assert (status, first["X-Cache-Status"]) == (200, "MISS")
    etag = first["ETag"]
    assert etag and "public" in first["Cache-Control"]

    status, again = get(port, API)
    assert (status, again["X-Cache-Status"], again["ETag"]) == (200, "HIT", etag)
    status, revalidated = get(port, API, If_None_Match=etag)
    assert (status, revalidated["X-Cache-Status"]) == (304, "HIT")

    # A newer snapshot is not seen while the stored copy is fresh: nginx, not the app,
    # answered (the app would send the new ETag).
    new = publish()
    status, direct = get(origin, API)
    assert status == 200 and direct["ETag"].startswith(f'"s{new.pk}-')
    status, cached = get(port, API)
    assert (status, cached["X-Cache-Status"], cached["ETag"]) == (200, "HIT", etag)


def test_stale_copy_is_revalidated_then_replaced_by_a_new_snapshot(proxy, settings):
    port, _ = proxy
    settings.ARENA_READ_MAX_AGE = 1
    settings.ARENA_READ_STALE_WHILE_REVALIDATE = 0
    publish()
    status, stored = get(port, API)
    assert (status, stored["X-Cache-Status"]) == (200, "MISS")
    etag = stored["ETag"]

    # Once stale, nginx asks the app again (in the background, with the stored ETag, while
    # this client gets the stale copy); nothing changed, so the copy is renewed as it was.
    refreshing = {"STALE", "UPDATING", "REVALIDATED", "EXPIRED"}
    stale = poll(port, API, lambda s, h: h.get("X-Cache-Status") in refreshing)
    assert stale["ETag"] == etag
    renewed = poll(port, API, lambda s, h: h.get("X-Cache-Status") == "HIT")
    assert renewed["ETag"] == etag

    new = publish()
    fresh = poll(port, API, lambda s, h: s == 200 and h.get("ETag") != etag)
    assert fresh["ETag"].startswith(f'"s{new.pk}-')


def test_votes_and_other_routes_pass_through_uncached(proxy):
    port, _ = proxy
    status, headers = get(port, "/healthz?check=live")
    assert status == 200
    assert headers.get("X-Cache-Status") is None  # not in the cached location at all
    status, headers = get(port, "/api/v1/me")
    assert headers.get("X-Cache-Status") is None
