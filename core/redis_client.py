"""One redis-py client per process for the hot path, and the breaker that makes a down Redis cheap.

Django's `RedisCache` builds a new `redis.Redis` object for every cache call (~0.2 ms of
CPU each) and offers no pipelines, so a throttle check through it costs two or three
round trips plus that construction. The hot path instead uses this client: built once per
process from `settings.REDIS_URL`, with its own small connection pool, and keys of its own
namespaced under the cache's key prefix (e.g. `arena:thr:…`). Without `REDIS_URL`
(embedded mode) there is no client and callers fall back to the Django cache. The
throttles' one command per request goes through `command`, on connections of the client's
kind kept off its pool (whose checkout was half of that command's CPU).

Redis is a cache and a broker here, never the only copy of anything a request needs, so
every caller treats it as optional (docs/reliability.md):

* Every connection has short connect and socket timeouts (`REDIS_CONNECT_TIMEOUT`,
  `REDIS_SOCKET_TIMEOUT`): a frozen Redis (SIGSTOP) costs one timeout, not a hang.
* A per-process circuit breaker (`breaker`) opens on the first connection error or
  timeout. While it is open (`REDIS_BREAKER_SECONDS`) nobody in this process talks to
  Redis: the throttles count in process memory, the cache answers misses, triggers are
  left to the beat schedule. After that one caller probes; success closes it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import kombu.exceptions
import redis
from django.conf import settings

T = TypeVar("T")

# A sync worker uses one connection; gthread workers share the pool between their threads.
# Each command takes well under a millisecond, so a thread waits briefly for a free one
# rather than opening one connection per thread (the pair server runs 80 threads).
POOL_SIZE = 16

# What a Redis that is down, restarting or frozen raises through redis-py.
REDIS_ERRORS: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.BusyLoadingError,
    kombu.exceptions.OperationalError,  # publishing a task to the broker (Redis) failed
    OSError,
)

_lock = threading.Lock()
_client: redis.Redis | None = None
_client_url = ""


class RedisUnavailable(Exception):
    """Redis did not answer (or the breaker is open): the caller takes its fallback."""


class Breaker:
    """Open for `REDIS_BREAKER_SECONDS` after a failure; then one probe at a time decides.

    Per process: each web worker finds out on its own, at the cost of one failed call.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failed_at: float | None = None  # monotonic time of the last failure; None = closed
        self._probing = False
        self.failures = 0  # calls that failed since start (or reset); for drills and tests

    def _open(self, now: float) -> bool:
        at = self._failed_at
        return at is not None and now - at < float(settings.REDIS_BREAKER_SECONDS)

    def allow(self) -> bool:
        """Whether this caller may talk to Redis now (False while open)."""
        if self._failed_at is None:
            return True
        with self._lock:
            if self._open(time.monotonic()) or self._probing:
                return False
            self._probing = True  # this caller is the probe; the others wait for it
            return True

    def succeeded(self) -> None:
        if self._failed_at is not None:
            with self._lock:
                self._failed_at, self._probing = None, False

    def failed(self) -> None:
        with self._lock:
            self._failed_at = time.monotonic()
            self._probing = False
            self.failures += 1

    @property
    def is_open(self) -> bool:
        """Whether Redis was last found down (open, or waiting for its probe)."""
        return self._failed_at is not None

    def reset(self) -> None:
        with self._lock:
            self._failed_at, self._probing, self.failures = None, False, 0


breaker = Breaker()


def guarded(call: Callable[[], T]) -> T:
    """Run `call` (which talks to Redis) under the breaker; RedisUnavailable if it cannot."""
    if not breaker.allow():
        raise RedisUnavailable("Redis breaker open")
    try:
        result = call()
    except REDIS_ERRORS as exc:
        breaker.failed()
        raise RedisUnavailable(str(exc)) from exc
    breaker.succeeded()
    return result


def timeouts() -> dict[str, float]:
    """The socket options every Redis connection of the site uses."""
    return {
        "socket_timeout": float(settings.REDIS_SOCKET_TIMEOUT),
        "socket_connect_timeout": float(settings.REDIS_CONNECT_TIMEOUT),
    }


def shared_redis() -> redis.Redis | None:
    """This process's client for `settings.REDIS_URL`, or None when Redis is not configured."""
    url = settings.REDIS_URL
    if not url:
        return None
    client = _client
    if client is not None and _client_url == url:
        return client
    return _connect(url)


def _connect(url: str) -> redis.Redis:
    global _client, _client_url
    with _lock:
        if _client is None or _client_url != url:
            pool = redis.BlockingConnectionPool.from_url(
                url,
                max_connections=POOL_SIZE,
                timeout=float(settings.REDIS_SOCKET_TIMEOUT),  # wait for a free connection
                **timeouts(),
            )
            old, _client, _client_url = _client, redis.Redis(connection_pool=pool), url
            if old is not None:
                old.connection_pool.disconnect()
        return _client


# Connections for `command`, most recently used last, and the (client, pid) they belong to.
_idle_lock = threading.Lock()
_idle: list[redis.Connection] = []
_idle_owner: tuple[redis.Redis, int] | None = None


def _owns_idle(client: redis.Redis) -> bool:
    return _idle_owner is not None and _idle_owner[0] is client and _idle_owner[1] == os.getpid()


def _take_idle(client: redis.Redis) -> redis.Connection | None:
    global _idle_owner
    with _idle_lock:
        if not _owns_idle(client):
            if _idle_owner is not None and _idle_owner[1] == os.getpid():
                for conn in _idle:  # a client for another URL replaced this one
                    conn.disconnect()
            _idle.clear()  # in a forked child they are the parent's: left alone
            _idle_owner = (client, os.getpid())
        return _idle.pop() if _idle else None


def command(client: redis.Redis, *args):
    """Send one command with a connection of `client`'s kind and read its reply, off its pool.

    redis-py's pool took half of a throttle check's CPU (~20 of ~40 us): a queue with a
    timeout, and a poll() on every checkout for connections left with unread data or
    closed by the server. Connections here never hold unread data: one caller at a time
    sends a command and reads its whole reply, and redis-py's send and read disconnect on
    any error. One the server closed (Redis restarted) fails when reused; that is tried
    once more on a new connection, as the pool's check would have reconnected it. At most
    POOL_SIZE are kept idle per process.
    """
    conn = _take_idle(client)
    reused = conn is not None
    if conn is None:
        pool = client.connection_pool
        conn = pool.connection_class(**pool.connection_kwargs)
    try:
        conn.send_command(*args)
        reply = conn.read_response()
    except redis.exceptions.ConnectionError:
        conn.disconnect()
        if not reused:
            raise
        conn.send_command(*args)  # connects anew
        reply = conn.read_response()
    except BaseException:
        conn.disconnect()
        raise
    with _idle_lock:
        if _owns_idle(client) and len(_idle) < POOL_SIZE:
            _idle.append(conn)
            return reply
    conn.disconnect()
    return reply


def key_prefix() -> str:
    """Namespace of our own keys: the cache's KEY_PREFIX (several sites may share a Redis)."""
    return settings.CACHES.get("default", {}).get("KEY_PREFIX") or "arena"


def shares_cache_redis() -> bool:
    """Whether the default Django cache is Redis at `REDIS_URL`, so both see the same keys."""
    cfg = settings.CACHES.get("default", {})
    return (
        bool(settings.REDIS_URL)
        and cfg.get("BACKEND", "").endswith("RedisCache")
        and cfg.get("LOCATION") == settings.REDIS_URL
    )
