"""The Django cache on Redis that degrades to "always a miss" when Redis does not answer.

Everything the site caches (boards, pages, API bodies, the published snapshot id, the
recompute status) can be rebuilt from PostgreSQL, so with Redis down a read is served from
the database rather than failing. Each call goes through the process's breaker
(`core.redis_client.breaker`): the first failure opens it and the calls after that return
at once, without a connection attempt, until a probe finds Redis back.

A write or delete that could not reach Redis is remembered (a bounded set of keys) and
the key is deleted once Redis answers again, so a value that changed during an outage
(e.g. the published snapshot id, written by the worker) is not served stale from a Redis
that was only frozen.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from django.core.cache.backends.redis import RedisCache

from .redis_client import RedisUnavailable, guarded

log = logging.getLogger(__name__)
MAX_DIRTY_KEYS = 1000

_dirty_lock = threading.Lock()
_dirty: set[str] = set()


def _remember(key: str) -> None:
    with _dirty_lock:
        if len(_dirty) < MAX_DIRTY_KEYS:
            _dirty.add(key)


class DegradingRedisCache(RedisCache):
    """`RedisCache` whose reads miss and writes are dropped while Redis is unreachable."""

    def _call(self, name: str, fallback: Any, *args: Any, dirty: str | None = None, **kwargs: Any):
        method = getattr(super(), name)
        try:
            result = guarded(lambda: method(*args, **kwargs))
        except RedisUnavailable:
            if dirty is not None:
                _remember(dirty)
            return fallback
        if _dirty:
            self._flush_dirty()
        return result

    def _flush_dirty(self) -> None:
        with _dirty_lock:
            keys = list(_dirty)
            _dirty.clear()
        try:
            guarded(lambda: super(DegradingRedisCache, self).delete_many(keys))
        except RedisUnavailable:
            for key in keys:
                _remember(key)

    def get(self, key, default=None, version=None):
        return self._call("get", default, key, default, version)

    def get_many(self, keys, version=None):
        return self._call("get_many", {}, keys, version)

    def has_key(self, key, version=None):
        return self._call("has_key", False, key, version)

    def set(self, key, value, timeout=-1, version=None) -> None:
        if timeout == -1:
            timeout = self.default_timeout
        self._call("set", None, key, value, timeout, version, dirty=key)

    def add(self, key, value, timeout=-1, version=None):
        if timeout == -1:
            timeout = self.default_timeout
        # False: "someone else holds it", the safe answer for a flag or a counter.
        return self._call("add", False, key, value, timeout, version, dirty=key)

    def set_many(self, data, timeout=-1, version=None):
        if timeout == -1:
            timeout = self.default_timeout
        failed = self._call("set_many", None, data, timeout, version)
        if failed is None:
            for key in data:
                _remember(key)
            return list(data)
        return failed

    def touch(self, key, timeout=-1, version=None):
        if timeout == -1:
            timeout = self.default_timeout
        return self._call("touch", False, key, timeout, version)

    def delete(self, key, version=None):
        return self._call("delete", False, key, version, dirty=key)

    def delete_many(self, keys, version=None) -> None:
        keys = list(keys)
        if self._call("delete_many", False, keys, version) is False:
            for key in keys:
                _remember(key)

    def incr(self, key, delta=1, version=None):
        try:
            return guarded(lambda: super(DegradingRedisCache, self).incr(key, delta, version))
        except RedisUnavailable:
            raise ValueError(f"Key {key!r} not found (Redis unreachable)") from None

    def clear(self):
        return self._call("clear", False)
