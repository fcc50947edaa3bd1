"""Calling a model for an evaluation: the arena's own provider client, one shared slot at a time.

Every request goes through ``serving.providers.complete_with_usage`` -- the same request
bodies, routes, key handling and error reasons as ``/create_pair`` -- from the calling
thread (the driver's lanes are threads; each keeps its own event loop and keep-alive
client). Around each call the thread holds one slot of the provider's cross-worker
semaphore (`evaluations.semaphore`), so a provider never has more than its limit of
evaluation calls in flight, whatever the number of runs and workers.

A run stores its providers' settings when it is created (`provider_settings`,
`judge_settings`: kind, URL, remote name, the key's *variable name*, call timeout and
concurrency limit) and calls through those (`endpoint`), so editing a provider does not
change a run under way. Keys are read from the worker's environment at each call, never
stored.

The tokens and cost each call reports are added to the calling thread's `Meter`, which the
driver reads per item.
"""

from __future__ import annotations

import asyncio
import os
import threading
from dataclasses import dataclass
from typing import Any

import httpx
from django.conf import settings

from serving.models import ModelProvider, ProviderKind
from serving.providers import (
    Generation,
    Prompt,
    ProviderConfig,
    ProviderError,
    Usage,
    complete_with_usage,
)

from .models import JudgeEndpoint
from .semaphore import SemaphoreTimeout, slot

# Seconds a semaphore slot outlives its call's timeout (then a dead holder's slot is free).
_LEASE_MARGIN_S = 30.0


def provider_settings(provider: ModelProvider) -> dict[str, Any]:
    """The run's copy of a catalogue model's provider (no secret: the key's variable name)."""
    return {
        "source": "provider",
        "provider_id": provider.pk,
        "kind": provider.kind,
        "base_url": provider.base_url,
        "remote_model": provider.remote_model,
        "api_key_env": provider.api_key_env,
        "timeout_seconds": float(settings.EVALUATION_CALL_TIMEOUT_SECONDS),
        "max_concurrency": max(
            1, min(provider.max_concurrency, settings.EVALUATION_PROVIDER_CONCURRENCY)
        ),
        "limit_key": f"provider:{provider.pk}",
    }


def judge_settings(endpoint: JudgeEndpoint) -> dict[str, Any]:
    return {
        "source": "judge_endpoint",
        "provider_id": -endpoint.pk,
        "kind": ProviderKind.OPENAI_CHAT.value,
        "base_url": endpoint.base_url,
        "remote_model": endpoint.remote_model,
        "api_key_env": endpoint.api_key_env,
        "timeout_seconds": float(endpoint.timeout_seconds),
        "max_concurrency": endpoint.max_concurrency,
        "limit_key": f"judge:{endpoint.pk}",
    }


@dataclass(frozen=True)
class Endpoint:
    config: ProviderConfig
    limit_key: str
    limit: int

    @property
    def timeout_s(self) -> float:
        return self.config.timeout_seconds


def endpoint(stored: dict[str, Any]) -> Endpoint:
    config = ProviderConfig(
        provider_id=int(stored["provider_id"]),
        kind=str(stored["kind"]),
        base_url=str(stored["base_url"]),
        remote_model=str(stored["remote_model"]),
        api_key_env=str(stored.get("api_key_env", "")),
        timeout_seconds=float(stored["timeout_seconds"]),
        max_concurrency=int(stored["max_concurrency"]),
    )
    return Endpoint(config, str(stored["limit_key"]), int(stored["max_concurrency"]))


def missing_key(stored: dict[str, Any]) -> str | None:
    """The key variable's name if it is needed and not set in this process."""
    name = str(stored.get("api_key_env") or "")
    return name if name and not os.environ.get(name) else None


@dataclass
class Meter:
    """Calls and reported usage of one thread since its last `reset_meter`."""

    calls: int = 0
    with_usage: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None

    def add(self, usage: Usage) -> None:
        self.calls += 1
        if usage.prompt_tokens is not None or usage.completion_tokens is not None:
            self.with_usage += 1
            self.prompt_tokens += usage.prompt_tokens or 0
            self.completion_tokens += usage.completion_tokens or 0
        if usage.cost is not None:
            self.cost = (self.cost or 0.0) + usage.cost


_thread = threading.local()


def meter() -> Meter:
    current: Meter | None = getattr(_thread, "meter", None)
    return current if current is not None else reset_meter()


def reset_meter() -> Meter:
    fresh = Meter()
    _thread.meter = fresh
    return fresh


def _loop_and_client() -> tuple[asyncio.AbstractEventLoop, httpx.AsyncClient]:
    if not hasattr(_thread, "loop"):
        _thread.loop = asyncio.new_event_loop()
        # Timeouts are enforced per call (asyncio), as the engine does: a total, not per read.
        _thread.http = httpx.AsyncClient(timeout=None)
    return _thread.loop, _thread.http


def close_thread_client() -> None:
    """Close this thread's client and loop (a lane calls it when it ends)."""
    loop = getattr(_thread, "loop", None)
    if loop is None:
        return
    try:
        loop.run_until_complete(_thread.http.aclose())
    finally:
        loop.close()
        del _thread.loop, _thread.http


def as_prompt(request: Any) -> Prompt:
    """Chat messages (the suites' requests) or a ``serving.providers.Prompt`` (infilling)."""
    if isinstance(request, Prompt):
        return request
    if isinstance(request, tuple):
        return Prompt(messages=request)
    raise TypeError(f"cannot send a {type(request).__name__}")


class Caller:
    """The callable the suites are handed: one request in, the raw answer text out."""

    def __init__(self, target: Endpoint, generation: Generation) -> None:
        self.target = target
        self.generation = generation

    def __call__(self, request: Any) -> str:
        prompt = as_prompt(request)
        timeout = self.target.timeout_s
        try:
            with slot(
                self.target.limit_key,
                limit=self.target.limit,
                lease_s=timeout + _LEASE_MARGIN_S,
            ):
                loop, http = _loop_and_client()
                text, usage = loop.run_until_complete(
                    asyncio.wait_for(
                        complete_with_usage(http, self.target.config, prompt, self.generation),
                        timeout,
                    )
                )
        except TimeoutError:
            meter().add(Usage())
            raise ProviderError("timeout", f"no answer within {timeout:g} s") from None
        except SemaphoreTimeout:
            raise ProviderError("busy", "no free slot for this provider") from None
        except ProviderError:
            meter().add(Usage())
            raise
        meter().add(usage)
        return text


def generation(values: dict[str, Any]) -> Generation:
    return Generation(
        max_tokens=int(values.get("max_tokens", 1024)),
        temperature=float(values.get("temperature", 0.0)),
        top_p=float(values.get("top_p", 1.0)),
    )
