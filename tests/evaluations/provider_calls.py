"""Call a provider the way the arena does (``serving.providers.complete``), synchronously.

For tests and benchmarks of the evaluation suites against the stub provider: wraps one
provider in a callable taking chat messages, an ``analysis.fim.ChatFimPrompt`` or a
``serving.providers.Prompt``, with greedy settings and a deadline. Imports Django models
(through ``serving.providers``): use it where Django is configured.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import httpx


def provider_fn(
    base_url: str, remote_model: str, *, kind: str = "openai_chat", timeout: float = 5.0
) -> Callable[[Any], str]:
    from serving.providers import Generation, Prompt, ProviderConfig, ProviderError, complete

    config = ProviderConfig(
        provider_id=0,
        kind=kind,
        base_url=base_url,
        remote_model=remote_model,
        timeout_seconds=timeout,
    )
    greedy = Generation(max_tokens=1024, temperature=0.0, top_p=1.0)
    # One event loop and keep-alive client per calling thread (the suites call from a pool).
    local = threading.local()

    def send(request: Any) -> str:
        if not hasattr(local, "loop"):
            local.loop = asyncio.new_event_loop()
            local.http = httpx.AsyncClient(timeout=timeout)
        if isinstance(request, tuple):
            prompt = Prompt(messages=request)
        elif isinstance(request, Prompt):
            prompt = request
        else:  # analysis.fim.ChatFimPrompt
            prompt = Prompt(messages=tuple(request.messages), stop=tuple(request.stop))
        try:
            return local.loop.run_until_complete(
                asyncio.wait_for(complete(local.http, config, prompt, greedy), timeout)
            )
        except TimeoutError:
            raise ProviderError("timeout", f"no answer in {timeout:g} s") from None

    return send
