"""One redis-py client per process for the vote hot path: throttle counters, the vote trigger.

Django's `RedisCache` builds a new `redis.Redis` object for every cache call (~0.2 ms of
CPU each) and offers no pipelines, so a throttle check through it costs two or three
round trips plus that construction. The hot path instead uses this client: built once per
process from `settings.REDIS_URL`, with its own small connection pool, and keys of its own
namespaced under the cache's key prefix (e.g. `arena:thr:…`). Without `REDIS_URL`
(embedded mode) there is no client and callers fall back to the Django cache.
"""

from __future__ import annotations

import threading

import redis
from django.conf import settings

# A sync worker uses one connection; gthread workers share the pool between their threads.
# Each command takes well under a millisecond, so a thread waits briefly for a free one
# rather than opening one connection per thread (the pair server runs 80 threads).
POOL_SIZE = 16
TIMEOUT_SECONDS = 2.0

_lock = threading.Lock()
_client: redis.Redis | None = None
_client_url = ""


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
                timeout=TIMEOUT_SECONDS,  # wait for a free connection at most this long
                socket_timeout=TIMEOUT_SECONDS,
                socket_connect_timeout=TIMEOUT_SECONDS,
            )
            old, _client, _client_url = _client, redis.Redis(connection_pool=pool), url
            if old is not None:
                old.connection_pool.disconnect()
        return _client


def key_prefix() -> str:
    """Namespace of our own keys: the cache's KEY_PREFIX (several sites may share a Redis)."""
    return settings.CACHES.get("default", {}).get("KEY_PREFIX") or "arena"


def shares_cache_redis() -> bool:
    """Whether the default Django cache is Redis at `REDIS_URL`, so both see the same keys."""
    cfg = settings.CACHES.get("default", {})
    return (
        bool(settings.REDIS_URL)
        and cfg.get("BACKEND", "").endswith(".RedisCache")
        and cfg.get("LOCATION") == settings.REDIS_URL
    )
