"""`core.redis_client.command`: the throttles' round trip on connections kept off the pool.

A connection is reused while it works, replaced when the server closed it (a Redis
restart must not open the breaker), never kept after a timeout (its reply may still
come), and a Redis that is down raises as redis-py would.
"""

from __future__ import annotations

import pytest
import redis

from core import redis_client
from core.redis_client import command, shared_redis


def _idle() -> list:
    return list(redis_client._idle)


def test_a_connection_is_reused(on_redis):
    client = shared_redis()
    assert command(client, "SET", "k", "v") == b"OK"
    first = _idle()
    assert command(client, "GET", "k") == b"v"
    assert _idle() == first and len(first) == 1


def test_a_connection_the_server_closed_is_replaced(on_redis):
    client = shared_redis()
    conn_id = command(client, "CLIENT", "ID")
    assert client.client_kill_filter(_id=conn_id) == 1
    assert command(client, "PING") == b"PONG"  # no error: a new connection answered
    assert command(client, "CLIENT", "ID") != conn_id


def test_a_restarted_redis_is_found_again(on_redis):
    client = shared_redis()
    assert command(client, "PING") == b"PONG"
    on_redis.kill()
    on_redis.start()
    assert command(client, "PING") == b"PONG"


def test_a_redis_that_is_down_raises_and_keeps_nothing(on_redis):
    client = shared_redis()
    assert command(client, "PING") == b"PONG"
    on_redis.kill()
    with pytest.raises(redis.exceptions.ConnectionError):
        command(client, "PING")
    assert _idle() == []


def test_a_timeout_raises_and_keeps_nothing(on_redis):
    client = shared_redis()
    assert command(client, "PING") == b"PONG"
    on_redis.freeze()
    with pytest.raises(redis.exceptions.TimeoutError):
        command(client, "PING")
    assert _idle() == []
    on_redis.thaw()
    assert command(client, "PING") == b"PONG"


def test_another_client_starts_afresh(on_redis, private_redis, settings):
    old = shared_redis()
    command(old, "PING")
    kept = _idle()[0]
    settings.REDIS_URL = private_redis.url.replace("/0", "/1")
    new = shared_redis()
    assert new is not old
    assert command(new, "CLIENT", "INFO").split(b" db=")[1].startswith(b"1 ")
    assert kept not in _idle() and kept._sock is None  # the old client's was closed
