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
    # One event loop on a thread of its own, shared by the calling threads (the suites call
    # from a pool): a caller's thread may already run a loop (Playwright's, in the suite).
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    http = httpx.AsyncClient(timeout=timeout)

    def send(request: Any) -> str:
        if isinstance(request, tuple):
            prompt = Prompt(messages=request)
        elif isinstance(request, Prompt):
            prompt = request
        else:  # analysis.fim.ChatFimPrompt
            prompt = Prompt(messages=tuple(request.messages), stop=tuple(request.stop))
        future = asyncio.run_coroutine_threadsafe(
            asyncio.wait_for(complete(http, config, prompt, greedy), timeout), loop
        )
        try:
            return future.result()
        except TimeoutError:
            raise ProviderError("timeout", f"no answer in {timeout:g} s") from None

    return send
