"""Named locks: each name is its own lock, in the embedded mode and on Redis (under the key prefix)."""

from __future__ import annotations

import pytest

from core.locks import lock_key, single_flight
from core.redis_client import shared_redis


@pytest.mark.parametrize("embedded", [True, False], ids=["in-process", "redis"])
def test_names_are_separate_locks(settings, embedded):
    if embedded:
        settings.REDIS_URL = ""
    with single_flight("relabel", timeout=60) as relabel:
        assert relabel
        with single_flight("recompute", timeout=60) as recompute:
            assert recompute  # another name is free
        with single_flight("relabel", timeout=60) as again:
            assert not again  # the same name is held
    with single_flight("relabel", timeout=60) as after:
        assert after  # released on exit


def test_redis_lock_lives_under_the_cache_key_prefix(settings):
    settings.CACHES = {
        **settings.CACHES,
        "default": {**settings.CACHES["default"], "KEY_PREFIX": "site-b"},
    }
    client = shared_redis()
    assert lock_key("recompute") == "site-b:lock:recompute"
    with single_flight("recompute", timeout=60) as mine:
        assert mine
        assert client.exists("site-b:lock:recompute")
        assert not client.exists("arena:lock:recompute")
    assert not client.exists("site-b:lock:recompute")
