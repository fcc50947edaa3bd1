"""Redis for the site: every connection behind one circuit breaker, and this process's client.

Redis is a cache and a broker here, never the only copy of anything a request needs, so every
caller treats it as optional (docs/reliability.md):

* Every connection has short connect and socket timeouts (`REDIS_CONNECT_TIMEOUT`,
  `REDIS_SOCKET_TIMEOUT`): a frozen Redis (SIGSTOP) costs one timeout, not a hang.
* `breaker` (pybreaker) opens on the first connection error or timeout of any connection of
  `connection_class` -- the Django cache's (django-redis, settings.py), the throttles' and
  `shared_redis()`'s. While it is open (`REDIS_BREAKER_SECONDS`) none of them connects or
  waits for a reply: each command fails at once with `redis.ConnectionError`, which the
  cache answers as a miss (django-redis's IGNORE_EXCEPTIONS), the throttles by counting in
  process memory and the vote trigger by leaving the recompute to the beat schedule. Then
  the next command is the probe; its success closes the breaker.

A connection that the server closed (Redis restarted) is replaced by redis-py's pool when it
is taken, before any command: a restart that is over does not open the breaker.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Any

import kombu.exceptions
import pybreaker
import redis
from django.conf import settings
from django_redis.pool import ConnectionFactory as DjangoRedisConnectionFactory
from redis.connection import parse_url

log = logging.getLogger(__name__)

# A sync worker uses one connection; gthread workers share the pool between their threads.
# Each command takes well under a millisecond, so a thread waits briefly for a free one
# rather than opening one connection per thread (the pair server runs many threads).
POOL_SIZE = 16

# What a Redis that is down, restarting or frozen raises through redis-py.
REDIS_ERRORS: tuple[type[BaseException], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.BusyLoadingError,
    kombu.exceptions.OperationalError,  # publishing a task to the broker (Redis) failed
    OSError,
)


class _Log(pybreaker.CircuitBreakerListener):
    def state_change(
        self,
        cb: pybreaker.CircuitBreaker,
        old_state: pybreaker.CircuitBreakerState | None,
        new_state: pybreaker.CircuitBreakerState,
    ) -> None:
        if new_state.name == pybreaker.STATE_OPEN:
            log.warning("Redis unreachable: no Redis calls for %g s", cb.reset_timeout)
        elif new_state.name == pybreaker.STATE_CLOSED:
            log.info("Redis answers again")


class _Breaker(pybreaker.CircuitBreaker):
    """pybreaker's breaker, open for `REDIS_BREAKER_SECONDS` unless given a time of its own.

    Read when the breaker is open, not at import: importing the site must not load settings.
    """

    _own_timeout: float | None = None

    @property
    def reset_timeout(self) -> float:
        own = self._own_timeout
        return float(settings.REDIS_BREAKER_SECONDS) if own is None else own

    @reset_timeout.setter
    def reset_timeout(self, timeout: float | None) -> None:
        self._own_timeout = timeout


# Per process: each web worker finds out on its own, at the cost of one failed command.
breaker = _Breaker(
    fail_max=1,
    # Only Redis being away counts; a command Redis refused (ResponseError) does not.
    exclude=[lambda exc: not isinstance(exc, REDIS_ERRORS)],
    listeners=[_Log()],
    name="redis",
)


class _Guarded:
    """Mixin for a redis-py connection class: it connects and reads only through `breaker`.

    The connection class it is mixed into comes from `connection_class`; redis-py leaves
    these methods unannotated, hence the `Any` parent.
    """

    def _connect(self) -> Any:
        parent: Any = super()
        try:
            with breaker.calling():
                return parent._connect()
        except pybreaker.CircuitBreakerError:
            raise redis.exceptions.ConnectionError("Redis circuit breaker open") from None

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        parent: Any = super()
        try:
            with breaker.calling():
                return parent.read_response(*args, **kwargs)
        except pybreaker.CircuitBreakerError:
            parent.disconnect()  # its reply may still come
            raise redis.exceptions.ConnectionError("Redis circuit breaker open") from None


@functools.cache
def connection_class(url: str) -> type[redis.connection.AbstractConnection]:
    """The connection class redis-py would use for `url` (TCP, TLS, socket), behind `breaker`."""
    # redis-py leaves parse_url unannotated.
    options = parse_url(url)  # type: ignore[no-untyped-call]
    base = options.get("connection_class", redis.Connection)
    return type(f"Guarded{base.__name__}", (_Guarded, base), {})


class ConnectionFactory(DjangoRedisConnectionFactory):  # type: ignore[misc]  # untyped library
    """django-redis's connection factory, its connections of `connection_class`."""

    def get_connection_pool(self, params: dict[str, Any]) -> redis.ConnectionPool:
        pool: redis.ConnectionPool = super().get_connection_pool(
            {**params, "connection_class": connection_class(params["url"])}
        )
        return pool


def timeouts() -> dict[str, float]:
    """The socket options every Redis connection of the site uses."""
    return {
        "socket_timeout": float(settings.REDIS_SOCKET_TIMEOUT),
        "socket_connect_timeout": float(settings.REDIS_CONNECT_TIMEOUT),
    }


_lock = threading.Lock()
_client: redis.Redis | None = None
_client_url = ""


def shared_redis() -> redis.Redis | None:
    """This process's client for `settings.REDIS_URL`, or None when Redis is not configured."""
    global _client, _client_url
    url = settings.REDIS_URL
    if not url:
        return None
    client = _client
    if client is not None and _client_url == url:
        return client
    with _lock:
        if _client is None or _client_url != url:
            pool = redis.BlockingConnectionPool.from_url(
                url,
                max_connections=POOL_SIZE,
                timeout=float(settings.REDIS_SOCKET_TIMEOUT),  # wait for a free connection
                connection_class=connection_class(url),
                **timeouts(),
            )
            old, _client, _client_url = _client, redis.Redis(connection_pool=pool), url
            if old is not None:
                old.connection_pool.disconnect()
        return _client


def key_prefix() -> str:
    """Namespace of our own keys: the cache's KEY_PREFIX (several sites may share a Redis)."""
    return settings.CACHES.get("default", {}).get("KEY_PREFIX") or "arena"
