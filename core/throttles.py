"""Rate limits of the API routes: DRF throttles counting fixed windows with the `limits` library.

With `REDIS_URL` set the counters live in Redis (`limits`' RedisStorage on the process's
client, `core.redis_client`), one round trip per limit and request, shared by every process.
Without Redis (embedded mode), and while Redis does not answer (or its breaker is open),
they are counted in this process's memory (`limits`' MemoryStorage): a request is never
refused or failed because Redis is down, and the limits still hold per process, so with N
web workers a client gets up to N times its limit until Redis is back (docs/reliability.md).

Anonymous clients are limited per IP (`core.client_ip`) and per user id; API keys lift both
and may carry a per-key limit of their own. DRF asks every throttle of a view, so each
counter is bumped even when another refuses. Rates are "<count>/<sec|min|hour|day>".
"""

from __future__ import annotations

import hashlib
import re
import time
from functools import lru_cache
from typing import TYPE_CHECKING

from django.conf import settings
from limits import RateLimitItem, RateLimitItemPerSecond
from limits.storage import MemoryStorage, RedisStorage
from limits.strategies import FixedWindowRateLimiter
from rest_framework.throttling import BaseThrottle

from .client_ip import client_ip
from .models import ApiClient
from .redis_client import REDIS_ERRORS, key_prefix, shared_redis

if TYPE_CHECKING:  # DRF loads this module while rest_framework.views is half imported
    from rest_framework.request import Request
    from rest_framework.views import APIView

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

_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(value: str) -> bool:
    """Whether `value` is text the validators accept (no NUL, no lone surrogate)."""
    return "\x00" not in value and (value.isascii() or not _SURROGATE.search(value))


@lru_cache(maxsize=64)
def parse_rate(rate: str) -> RateLimitItem:
    count, _, unit = rate.partition("/")
    return RateLimitItemPerSecond(int(count), _UNITS[unit.strip().lower()])


local = FixedWindowRateLimiter(MemoryStorage())
_shared: tuple[object, FixedWindowRateLimiter] | None = None


def _redis_limiter() -> FixedWindowRateLimiter | None:
    global _shared
    client = shared_redis()
    if client is None:
        return None
    if _shared is None or _shared[0] is not client:
        storage = RedisStorage(
            settings.REDIS_URL,
            connection_pool=client.connection_pool,
            key_prefix=f"{key_prefix()}:thr",
        )
        _shared = (client, FixedWindowRateLimiter(storage))
    return _shared[1]


def hit(rate: str, *identity: str) -> float | None:
    """Count one request against `rate` for `identity`; seconds to wait if over, else None."""
    item = parse_rate(rate)
    for limiter in (_redis_limiter(), local):
        if limiter is None:
            continue
        try:
            if limiter.hit(item, *identity):
                return None
            return max(0.0, limiter.get_window_stats(item, *identity).reset_time - time.time())
        except REDIS_ERRORS:
            continue  # Redis is away: this process counts meanwhile
    raise AssertionError("the memory limiter always answers")


class _Throttle(BaseThrottle):
    """An anonymous limit: `rate_name` in ARENA_THROTTLE_RATES per `identity`."""

    rate_name = ""
    _wait: float | None = None

    def identity(self, request: Request) -> str | None:
        raise NotImplementedError

    def allow_request(self, request: Request, view: APIView) -> bool:
        if isinstance(request.auth, ApiClient):
            return True
        ident = self.identity(request)
        if ident is None:
            return True
        self._wait = hit(settings.ARENA_THROTTLE_RATES[self.rate_name], self.rate_name, ident)
        return self._wait is None

    def wait(self) -> float | None:
        return self._wait


class _IpThrottle(_Throttle):
    def identity(self, request: Request) -> str | None:
        return client_ip(request)


class _UserThrottle(_Throttle):
    def identity(self, request: Request) -> str | None:
        data = request.data
        user_id = data.get("userId") or data.get("user_id") if isinstance(data, dict) else None
        if not isinstance(user_id, str) or not user_id or not valid_text(user_id):
            # Not a user id the vote could be stored under: validation answers 400 for it
            # after the throttles, which count this request per IP only.
            return None
        return hashlib.sha256(user_id.encode()).hexdigest()[:32]


class VoteIpThrottle(_IpThrottle):
    rate_name = "vote_ip"


class VoteUserThrottle(_UserThrottle):
    rate_name = "vote_user"


class CompletionLogIpThrottle(_IpThrottle):
    """Shown-completion logs (`/add_completion`) have a scope of their own, so logging the
    completions a user sees never uses up the allowance of their votes."""

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


class ApiKeyThrottle(BaseThrottle):
    """The per-key limit an admin set on an API client (none = unlimited)."""

    _wait: float | None = None

    def allow_request(self, request: Request, view: APIView) -> bool:
        client = request.auth
        if not isinstance(client, ApiClient) or not client.rate_limit_per_minute:
            return True
        self._wait = hit(f"{client.rate_limit_per_minute}/min", "key", str(client.pk))
        return self._wait is None

    def wait(self) -> float | None:
        return self._wait


VOTE_THROTTLES = [VoteIpThrottle, VoteUserThrottle, ApiKeyThrottle]
ACCOUNT_THROTTLES = [AccountIpThrottle]
COMPLETION_LOG_THROTTLES = [CompletionLogIpThrottle, CompletionLogUserThrottle, ApiKeyThrottle]
PAIR_THROTTLES = [PairIpThrottle, PairUserThrottle, ApiKeyThrottle]
READ_THROTTLES = [ReadIpThrottle, ApiKeyThrottle]
