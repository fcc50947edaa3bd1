"""Fixed-window rate limits on the shared cache (Redis in deployments).

One atomic counter per (scope, identity, window): `add` creates it, `incr` bumps it. This
costs one or two cache round trips and no per-request history, unlike DRF's default
throttles, which keep a list of timestamps per client.
"""

from __future__ import annotations

import hashlib
import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import BaseThrottle

from .models import ApiClient

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


def parse_rate(rate: str) -> tuple[int, int]:
    count, _, unit = rate.partition("/")
    return int(count), _UNITS[unit.strip().lower()]


def _hit(key: str, limit: int, period: int) -> float | None:
    """Count one request; return seconds to wait when over the limit, else None."""
    now = time.time()
    window_key = f"thr:{key}:{int(now // period)}"
    if cache.add(window_key, 1, period + 1):
        count = 1
    else:
        try:
            count = cache.incr(window_key)
        except ValueError:  # expired between add and incr
            cache.add(window_key, 1, period + 1)
            count = 1
    if count > limit:
        return period - (now % period)
    return None


class _Throttle(BaseThrottle):
    rate_name = ""
    _wait: float | None = None

    def applies(self, request) -> bool:
        return not isinstance(request.auth, ApiClient)

    def identity(self, request) -> str | None:
        raise NotImplementedError

    def allow_request(self, request, view) -> bool:
        if not self.applies(request):
            return True
        ident = self.identity(request)
        if ident is None:
            return True
        limit, period = parse_rate(settings.ARENA_THROTTLE_RATES[self.rate_name])
        self._wait = _hit(f"{self.rate_name}:{ident}", limit, period)
        return self._wait is None

    def wait(self) -> float | None:
        return self._wait


class _IpThrottle(_Throttle):
    def identity(self, request) -> str | None:
        return self.get_ident(request)


class _UserThrottle(_Throttle):
    def identity(self, request) -> str | None:
        data = request.data
        user_id = data.get("userId") or data.get("user_id") if isinstance(data, dict) else None
        if not isinstance(user_id, str) or not user_id:
            return None
        return hashlib.sha256(user_id.encode()).hexdigest()[:32]


class VoteIpThrottle(_IpThrottle):
    rate_name = "vote_ip"


class VoteUserThrottle(_UserThrottle):
    rate_name = "vote_user"


class PairIpThrottle(_IpThrottle):
    rate_name = "pair_ip"


class PairUserThrottle(_UserThrottle):
    rate_name = "pair_user"


class ReadIpThrottle(_IpThrottle):
    rate_name = "read_ip"


class ApiKeyThrottle(BaseThrottle):
    """The per-key limit an admin set on an API client (none = unlimited)."""

    _wait: float | None = None

    def allow_request(self, request, view) -> bool:
        client = request.auth
        if not isinstance(client, ApiClient) or not client.rate_limit_per_minute:
            return True
        self._wait = _hit(f"key:{client.pk}", client.rate_limit_per_minute, 60)
        return self._wait is None

    def wait(self) -> float | None:
        return self._wait


VOTE_THROTTLES = [VoteIpThrottle, VoteUserThrottle, ApiKeyThrottle]
PAIR_THROTTLES = [PairIpThrottle, PairUserThrottle, ApiKeyThrottle]
READ_THROTTLES = [ReadIpThrottle, ApiKeyThrottle]
