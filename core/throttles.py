"""Fixed-window rate limits on Redis (the Django cache in embedded mode).

One counter per (scope, identity, window). With `REDIS_URL` set, a throttle check is one
round trip on the process's own Redis client (`core.redis_client`): a small Lua script
that, for each counter, does SET NX with the window's expiry, then INCR. A route's
anonymous limits (per IP and per user id) are checked together in that one command.
Without Redis (embedded mode) the counters live in the Django cache (`add`, then `incr`).
Either way there is no per-request history, unlike DRF's default throttles, which keep a
list of timestamps per client.

When Redis does not answer (or its breaker, `core.redis_client.breaker`, is open) the same
fixed windows are counted in this process's memory instead (`LocalWindows`): a request is
never refused or failed because Redis is down, and the limits still hold per process, so
with N web workers a client gets up to N times its limit until Redis is back
(docs/reliability.md).
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from functools import lru_cache

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import BaseThrottle

from .client_ip import client_ip
from .models import ApiClient
from .redis_client import RedisUnavailable, command, guarded, key_prefix, shared_redis

_UNITS = {
    "s": 1,
    "sec": 1,
    "second": 1,
    "m": 60,
    "min": 60,
    "minute": 60,
    "h": 3600,
    "hour": 3600,
    "d": 86400,
    "day": 86400,
}

# (counter key without window, limit, period in seconds)
Hit = tuple[str, int, int]


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(value: str) -> bool:
    """Whether `value` is text the validators accept (no NUL, no lone surrogate)."""
    return "\x00" not in value and (value.isascii() or not _SURROGATE.search(value))


@lru_cache(maxsize=64)
def parse_rate(rate: str) -> tuple[int, int]:
    count, _, unit = rate.partition("/")
    return int(count), _UNITS[unit.strip().lower()]


def _count_in_cache(window_key: str, period: int) -> int:
    if cache.add(window_key, 1, period + 1):
        return 1
    try:
        return cache.incr(window_key)
    except ValueError:  # expired between add and incr
        cache.add(window_key, 1, period + 1)
        return 1


class LocalWindows:
    """Fixed-window counters in process memory: the fallback while Redis is unreachable."""

    MAX_KEYS = 100_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, tuple[float, int]] = {}  # window key -> (expires, count)

    def count(self, window_key: str, period: int, now: float) -> int:
        with self._lock:
            expires, n = self._counts.get(window_key, (0.0, 0))
            if expires <= now:
                if len(self._counts) >= self.MAX_KEYS:
                    self._purge(now)
                expires, n = now + period + 1, 0
            self._counts[window_key] = (expires, n + 1)
            return n + 1

    def _purge(self, now: float) -> None:
        live = {k: v for k, v in self._counts.items() if v[0] > now}
        if len(live) >= self.MAX_KEYS:  # a flood of distinct identities: start afresh
            live = {}
        self._counts = live

    def clear(self) -> None:
        with self._lock:
            self._counts.clear()


local_windows = LocalWindows()


# Every counter of a request in one command: for each key, SET NX with the window's expiry
# (so a counter never lives without one), then INCR. One EVAL instead of two commands per
# counter (redis-py packs and parses every command in Python), sent on a connection of
# `core.redis_client.command`'s rather than through the client's pool and a pipeline
# (~40 -> ~20 us of CPU per request). EVAL, not EVALSHA: Redis caches the compiled
# script by its hash, and a restarted Redis needs no NOSCRIPT retry.
_COUNT_SCRIPT = """
local counts = {}
for i, key in ipairs(KEYS) do
  redis.call('SET', key, 0, 'EX', ARGV[i], 'NX')
  counts[i] = redis.call('INCR', key)
end
return counts
"""


def _count_in_redis(client, windows: list[tuple[str, int]]) -> list[int]:
    prefix = key_prefix()
    counts = command(
        client,
        "EVAL",
        _COUNT_SCRIPT,
        len(windows),
        *(f"{prefix}:{window_key}" for window_key, _ in windows),
        *(period + 1 for _, period in windows),
    )
    return [int(n) for n in counts]


def hit_many(hits: list[Hit]) -> float | None:
    """Count one request against every limit; seconds to wait if any is exceeded, else None.

    Every counter is bumped even when another one refuses, as DRF does when it runs each
    throttle of a view in turn.
    """
    now = time.time()
    windows = [(f"thr:{key}:{int(now // period)}", period) for key, _, period in hits]
    client = shared_redis()
    if client is not None:
        try:
            counts = guarded(lambda: _count_in_redis(client, windows))
        except RedisUnavailable:
            counts = [local_windows.count(key, period, now) for key, period in windows]
    else:
        counts = [_count_in_cache(window_key, period) for window_key, period in windows]
    waits = [
        period - (now % period)
        for (_, limit, period), count in zip(hits, counts, strict=True)
        if count > limit
    ]
    return max(waits) if waits else None


class _Throttle(BaseThrottle):
    """Anonymous limits: one or more (rate name, identity) counters, checked in one go."""

    rate_name = ""
    _wait: float | None = None

    def applies(self, request) -> bool:
        return not isinstance(request.auth, ApiClient)

    def identity(self, request) -> str | None:
        raise NotImplementedError

    def hits(self, request) -> list[Hit]:
        ident = self.identity(request)
        if ident is None:
            return []
        limit, period = parse_rate(settings.ARENA_THROTTLE_RATES[self.rate_name])
        return [(f"{self.rate_name}:{ident}", limit, period)]

    def allow_request(self, request, view) -> bool:
        if not self.applies(request):
            return True
        hits = self.hits(request)
        if not hits:
            return True
        self._wait = hit_many(hits)
        return self._wait is None

    def wait(self) -> float | None:
        return self._wait


class _IpThrottle(_Throttle):
    def identity(self, request) -> str | None:
        return client_ip(request)


class _UserThrottle(_Throttle):
    def identity(self, request) -> str | None:
        data = request.data
        user_id = data.get("userId") or data.get("user_id") if isinstance(data, dict) else None
        if not isinstance(user_id, str) or not user_id or not valid_text(user_id):
            # Not a user id the vote could be stored under: validation answers 400 for it
            # after the throttles, which count this request per IP only.
            return None
        return hashlib.sha256(user_id.encode()).hexdigest()[:32]


class _Combined(_Throttle):
    """Several anonymous throttles counted in one round trip (same counters, same limits)."""

    parts: tuple[type[_Throttle], ...] = ()

    def hits(self, request) -> list[Hit]:
        return [hit for part in self.parts for hit in part().hits(request)]


class VoteIpThrottle(_IpThrottle):
    rate_name = "vote_ip"


class VoteUserThrottle(_UserThrottle):
    rate_name = "vote_user"


class CompletionLogIpThrottle(_IpThrottle):
    rate_name = "completion_ip"


class CompletionLogUserThrottle(_UserThrottle):
    rate_name = "completion_user"


class AccountIpThrottle(_IpThrottle):
    """Account routes (`/users`, `/users/authenticate`): per IP (`THROTTLE_ACCOUNT_IP`)."""

    rate_name = "account_ip"


class PairIpThrottle(_IpThrottle):
    rate_name = "pair_ip"


class PairUserThrottle(_UserThrottle):
    rate_name = "pair_user"


class ReadIpThrottle(_IpThrottle):
    rate_name = "read_ip"


class VoteThrottle(_Combined):
    """Votes: per IP and per user id (`THROTTLE_VOTE_IP`, `THROTTLE_VOTE_USER`)."""

    parts = (VoteIpThrottle, VoteUserThrottle)


class CompletionLogThrottle(_Combined):
    """Shown-completion logs (`/add_completion`): a scope of their own, so logging the
    completions a user sees can never use up the allowance of their votes
    (`THROTTLE_COMPLETION_IP`, `THROTTLE_COMPLETION_USER`)."""

    parts = (CompletionLogIpThrottle, CompletionLogUserThrottle)


class PairThrottle(_Combined):
    """Pair requests: per IP and per user id (`THROTTLE_PAIR_IP`, `THROTTLE_PAIR_USER`)."""

    parts = (PairIpThrottle, PairUserThrottle)


class ApiKeyThrottle(BaseThrottle):
    """The per-key limit an admin set on an API client (none = unlimited)."""

    _wait: float | None = None

    def allow_request(self, request, view) -> bool:
        client = request.auth
        if not isinstance(client, ApiClient) or not client.rate_limit_per_minute:
            return True
        self._wait = hit_many([(f"key:{client.pk}", client.rate_limit_per_minute, 60)])
        return self._wait is None

    def wait(self) -> float | None:
        return self._wait


VOTE_THROTTLES = [VoteThrottle, ApiKeyThrottle]
ACCOUNT_THROTTLES = [AccountIpThrottle]
COMPLETION_LOG_THROTTLES = [CompletionLogThrottle, ApiKeyThrottle]
PAIR_THROTTLES = [PairThrottle, ApiKeyThrottle]
READ_THROTTLES = [ReadIpThrottle, ApiKeyThrottle]
