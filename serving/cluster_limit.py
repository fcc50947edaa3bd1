"""Each provider's `max_concurrency` across every pairs process on every machine (Redis).

The engine's own semaphore counts the calls of one process; with K pairs processes a
provider would see up to K times its limit. So before a call the engine also takes one of
the provider's slots in a Redis semaphore shared by all of them (`core.semaphore`), without
waiting: a provider at its limit makes the side fail at once as ``busy`` (substituted like
any other failure), as the process's own limit does. The slot's lease is the provider's
timeout plus a margin, so the slots of a killed process free themselves.

Redis is optional here as everywhere (docs/reliability.md): when it does not answer, the
call goes on under the process's own limit alone, and Redis is left alone for
`REDIS_BREAKER_SECONDS`. The client is redis-py's asyncio one, on the engine's loop, so
a slow Redis never blocks the loop thread.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

import redis.asyncio
from django.conf import settings

from core.redis_client import REDIS_ERRORS, timeouts
from core.semaphore import ACQUIRE, semaphore_key

from .providers import ProviderConfig

log = logging.getLogger(__name__)

# Seconds a slot outlives its call's timeout before a dead holder's slot is free again.
LEASE_MARGIN = 5.0


class ClusterLimit:
    """The engine's view of the shared slots; used from the engine's loop thread only."""

    def __init__(self) -> None:
        self._client: redis.asyncio.Redis | None = None
        self._script: Any = None
        self._off_until = 0.0

    def _ready(self) -> bool:
        if not settings.REDIS_URL or not settings.SERVING_CLUSTER_LIMITS:
            return False
        if time.monotonic() < self._off_until:
            return False
        if self._client is None:
            limits = timeouts()
            self._client = redis.asyncio.Redis.from_url(
                settings.REDIS_URL,
                socket_timeout=limits["socket_timeout"],
                socket_connect_timeout=limits["socket_connect_timeout"],
            )
            self._script = self._client.register_script(ACQUIRE)
        return True

    def _down(self, exc: BaseException) -> None:
        log.warning("Provider limits across processes off for a while: Redis: %r", exc)
        self._off_until = time.monotonic() + float(settings.REDIS_BREAKER_SECONDS)

    async def acquire(self, provider: ProviderConfig) -> str | bool:
        """A token to release (a slot is held); True: not counted (no Redis); False: full."""
        if not self._ready():
            return True
        token = uuid.uuid4().hex
        lease = provider.timeout_seconds + LEASE_MARGIN
        key = semaphore_key("pairsem", str(provider.provider_id))
        try:
            got = await self._script(keys=[key], args=[provider.max_concurrency, lease, token])
        except REDIS_ERRORS as exc:
            self._down(exc)
            return True
        return token if got else False

    async def release(self, provider: ProviderConfig, token: str) -> None:
        if self._client is None:
            return
        try:
            await self._client.zrem(semaphore_key("pairsem", str(provider.provider_id)), token)
        except REDIS_ERRORS as exc:  # the lease frees it
            self._down(exc)
