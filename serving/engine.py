"""Provider calls for the pair path: one asyncio loop per process, both sides at once.

Django views here are synchronous (WSGI). A pair request hands its two calls to a
per-process event loop running on a daemon thread, with a few small ``httpx.AsyncClient``
pools per provider (keep-alive connections; see `_Shards`), and blocks until the pair is
settled. So the two calls run concurrently (the wait is the slower one, not the sum), a
process can have hundreds of calls in flight on one thread, and the view's thread only
sleeps meanwhile.

`serve_pair` settles one pair:

* both sides start at once, each bounded by ``min(provider timeout, pair deadline)``;
* a provider already at its ``max_concurrency`` -- in this process, or across every pairs
  process sharing the Redis (`serving.cluster_limit`) -- is not queued: the call fails at
  once as ``busy``;
* a side that fails (error, timeout, busy, missing key) is replaced by a substitute drawn
  by the caller's ``pick_substitute`` (the same pair distribution, conditioned on the
  other side's model) if at least ``min_substitute_seconds`` remain before the deadline
  and fewer than ``max_substitutes`` were used; otherwise the pair fails and the other
  side's call is cancelled;
* every call, successful or not, is returned as an `Attempt` so it can be logged.

The caller waits at most the deadline plus a small grace; if the loop does not answer by
then (it always should), the pair is cancelled and reported as a timeout -- a web worker
is never left hanging.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import ssl
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from .cluster_limit import ClusterLimit
from .providers import Generation, Prompt, ProviderConfig, ProviderError, complete

# Seconds the waiting thread allows beyond the deadline for the loop to hand back results.
_GRACE = 2.0
# Calls in flight per HTTP client (see _Shards).
SHARD_CONNECTIONS = 16


@dataclass(frozen=True)
class Slot:
    """A servable model: catalogue id and key, its provider, its tags."""

    model_id: int
    key: str
    provider: ProviderConfig
    tags: frozenset[str] = frozenset()


@dataclass
class Attempt:
    """One provider call. ``raw`` is the answer text when it succeeded."""

    slot: Slot
    position: int  # 0 = top, 1 = bottom
    completion_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    raw: str | None = None
    latency_s: float = 0.0
    error: ProviderError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.raw is not None


@dataclass
class PairOutcome:
    """The two shown attempts (top, bottom) or, on failure, the attempt that ended it."""

    sides: list[Attempt | None]
    attempts: list[Attempt]
    failure: Attempt | None = None
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.failure is None and all(a is not None and a.ok for a in self.sides)


class PairTimeout(Exception):
    """The loop did not settle the pair within deadline + grace (should not happen)."""


# Prompt and generation settings per provider kind are chosen by the caller.
PromptFor = Callable[[Slot], tuple[Prompt, Generation]]
PickSubstitute = Callable[[Slot, frozenset[int]], Slot | None]


@dataclass(frozen=True)
class _Plan:
    """How one pair is settled: `Engine.serve_pair`'s keyword arguments, for the loop."""

    prompt_for: PromptFor
    pick_substitute: PickSubstitute
    budget_s: float
    min_substitute_s: float
    max_substitutes: int


class _Shards:
    """A provider's HTTP clients, each kept to about ``SHARD_CONNECTIONS`` connections.

    httpcore's connection pool does work proportional to (connections in the pool)^2 each
    time a request starts or ends (``AsyncConnectionPool._assign_requests_to_connections``
    counts all connections for every idle one). With one client and a few hundred calls in
    flight, that bookkeeping alone saturated the loop thread (200 concurrent pairs took 6 s
    instead of 1 s). Small pools keep it negligible: a call goes to the least busy client,
    and a new client is added when all are at the shard size.
    """

    def __init__(self, tls: ssl.SSLContext) -> None:
        self._tls = tls
        self.clients: list[httpx.AsyncClient] = []
        self.busy: list[int] = []

    def acquire(self) -> int:
        index = min(range(len(self.busy)), key=self.busy.__getitem__, default=-1)
        if index < 0 or self.busy[index] >= SHARD_CONNECTIONS:
            # Timeouts are enforced per call with asyncio (a total, not per read).
            self.clients.append(
                httpx.AsyncClient(
                    timeout=None,
                    verify=self._tls,
                    limits=httpx.Limits(
                        max_connections=None, max_keepalive_connections=SHARD_CONNECTIONS
                    ),
                )
            )
            self.busy.append(0)
            index = len(self.busy) - 1
        self.busy[index] += 1
        return index

    def release(self, index: int) -> None:
        self.busy[index] -= 1


class Engine:
    """The per-process loop thread, HTTP clients and per-provider concurrency limits."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="serving-engine", daemon=True)
        self._thread.start()
        self._ready.wait()
        # One TLS context for every client (building one costs milliseconds).
        self._tls = ssl.create_default_context()
        # provider id -> its clients; provider id -> (limit, semaphore). Loop thread only.
        self._shards: dict[int, _Shards] = {}
        self._limits: dict[int, tuple[int, asyncio.Semaphore]] = {}
        self._cluster = ClusterLimit()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._ready.set)
        self.loop.run_forever()

    def _client_shards(self, provider: ProviderConfig) -> _Shards:
        shards = self._shards.get(provider.provider_id)
        if shards is None:
            shards = self._shards[provider.provider_id] = _Shards(self._tls)
        return shards

    def _semaphore(self, provider: ProviderConfig) -> asyncio.Semaphore:
        known = self._limits.get(provider.provider_id)
        if known is None or known[0] != provider.max_concurrency:
            # A changed limit starts a fresh count; calls in flight finish on the old one.
            known = (provider.max_concurrency, asyncio.Semaphore(provider.max_concurrency))
            self._limits[provider.provider_id] = known
        return known[1]

    async def _attempt(
        self, slot: Slot, position: int, prompt_for: PromptFor, deadline: float
    ) -> Attempt:
        attempt = Attempt(slot=slot, position=position)
        loop = asyncio.get_running_loop()
        sem = self._semaphore(slot.provider)
        if sem.locked():
            attempt.error = ProviderError("busy", "at its concurrency limit")
            return attempt
        shards = self._client_shards(slot.provider)
        async with sem:
            held = await self._cluster.acquire(slot.provider)
            if held is False:
                attempt.error = ProviderError("busy", "at its concurrency limit (all processes)")
                return attempt
            start = loop.time()
            budget = min(slot.provider.timeout_seconds, deadline - start)
            shard = shards.acquire()
            try:
                if budget <= 0:
                    raise TimeoutError
                prompt, gen = prompt_for(slot)
                async with asyncio.timeout(budget):
                    attempt.raw = await complete(shards.clients[shard], slot.provider, prompt, gen)
            except TimeoutError:
                attempt.error = ProviderError("timeout", f"no answer within {budget:.1f} s")
            except ProviderError as exc:
                attempt.error = exc
            except Exception as exc:  # a bug in one call must not hang the pair
                attempt.error = ProviderError("error", type(exc).__name__)
            finally:
                shards.release(shard)
                if isinstance(held, str):
                    await self._cluster.release(slot.provider, held)
            attempt.latency_s = loop.time() - start
        return attempt

    async def _serve(self, first: tuple[Slot, Slot], plan: _Plan) -> PairOutcome:
        prompt_for = plan.prompt_for
        loop = asyncio.get_running_loop()
        start = loop.time()
        deadline = start + plan.budget_s
        current = list(first)
        outcome = PairOutcome(sides=[None, None], attempts=[])
        failed: set[int] = set()
        substitutes = 0
        pending: dict[asyncio.Task[Attempt], int] = {
            asyncio.ensure_future(self._attempt(slot, pos, prompt_for, deadline)): pos
            for pos, slot in enumerate(first)
        }
        try:
            while pending:
                done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    pos = pending.pop(task)
                    attempt = task.result()
                    outcome.attempts.append(attempt)
                    if attempt.ok:
                        outcome.sides[pos] = attempt
                        continue
                    failed.add(attempt.slot.model_id)
                    partner = current[1 - pos]
                    substitute = None
                    if (
                        substitutes < plan.max_substitutes
                        and deadline - loop.time() >= plan.min_substitute_s
                    ):
                        substitute = plan.pick_substitute(
                            partner, frozenset(failed | {partner.model_id})
                        )
                    if substitute is None:
                        outcome.failure = attempt
                        return outcome
                    substitutes += 1
                    current[pos] = substitute
                    task = asyncio.ensure_future(
                        self._attempt(substitute, pos, prompt_for, deadline)
                    )
                    pending[task] = pos
            return outcome
        finally:
            # A failed pair stops its other call at once; its result is not shown anyway.
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
            outcome.elapsed_s = loop.time() - start

    def serve_pair(
        self,
        first: tuple[Slot, Slot],
        *,
        prompt_for: PromptFor,
        pick_substitute: PickSubstitute,
        budget_s: float,
        min_substitute_s: float,
        max_substitutes: int,
    ) -> PairOutcome:
        """Settle one pair (see module docstring); blocks the calling (non-loop) thread."""
        plan = _Plan(prompt_for, pick_substitute, budget_s, min_substitute_s, max_substitutes)
        future = asyncio.run_coroutine_threadsafe(self._serve(first, plan), self.loop)
        try:
            return future.result(budget_s + _GRACE)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise PairTimeout from None

    def close(self) -> None:
        async def close_clients() -> None:
            for shards in self._shards.values():
                for client in shards.clients:
                    await client.aclose()

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(close_clients(), self.loop).result(5.0)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5.0)


_engine: Engine | None = None
_engine_pid = 0
_engine_lock = threading.Lock()


def engine() -> Engine:
    """This process's engine, started on first use (after a fork, a new one)."""
    global _engine, _engine_pid
    if _engine is not None and _engine_pid == os.getpid():
        return _engine
    with _engine_lock:
        if _engine is None or _engine_pid != os.getpid():
            _engine = Engine()
            _engine_pid = os.getpid()
        return _engine
