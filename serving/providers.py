"""One small async HTTP client per provider kind (httpx).

Each kind knows its route, its request body and where the text is in the answer:

| kind | route | body | text |
|---|---|---|---|
| ``openai_chat`` | ``/chat/completions`` | ``messages``, ``stop`` (at most 4) | ``choices[0].message.content`` |
| ``openai_completion`` | ``/completions`` | ``prompt`` = prefix, ``suffix`` | ``choices[0].text`` |
| ``mistral_fim`` | ``/fim/completions`` | ``prompt`` = prefix, ``suffix`` | ``choices[0].message.content`` |

All three also send ``model`` (the provider's remote name), ``max_tokens``, ``temperature``,
``top_p`` and ``stream: false``. `complete_with_usage` also returns the answer's ``usage``
(``prompt_tokens``, ``completion_tokens`` and, from routers such as OpenRouter, ``cost``)
when the provider reports it; the offline evaluations count them.

Every call names this server in its ``User-Agent`` (`USER_AGENT`), on whichever client.

Secrets: the key is read from ``os.environ[config.api_key_env]`` for each call and goes
only into the ``Authorization`` header. Errors raised here are `ProviderError` with a
fixed reason and a short detail (exception class or HTTP status) -- never the response
body (providers echo keys and prompts in error bodies), never the request, and never
chained to the httpx exception (which holds the request and its headers).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any, NotRequired, TypedDict

import httpx

from .models import ProviderKind

# The OpenAI chat API accepts at most four stop sequences; clean-up cuts at all of them.
CHAT_MAX_STOP = 4


def _user_agent() -> str:
    try:
        return f"code-arena/{version('code-arena')}"
    except PackageNotFoundError:  # a source tree that was not installed
        return "code-arena"


# What providers see in their logs instead of httpx's own name.
USER_AGENT = _user_agent()


@dataclass(frozen=True)
class ProviderConfig:
    """A provider row as plain, hashable data (safe to share across threads)."""

    provider_id: int
    kind: str
    base_url: str
    remote_model: str
    api_key_env: str = ""
    timeout_seconds: float = 10.0
    max_concurrency: int = 32

    @property
    def is_chat(self) -> bool:
        return self.kind == ProviderKind.OPENAI_CHAT


@dataclass(frozen=True)
class Prompt:
    """What one request sends: chat messages, or prefix/suffix for native FiM; stop words."""

    messages: tuple[dict[str, str], ...] = ()
    prefix: str = ""
    suffix: str = ""
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class Generation:
    max_tokens: int = 512
    temperature: float = 0.5
    top_p: float = 0.9


@dataclass(frozen=True)
class Usage:
    """What a provider says one call consumed; ``None`` where it does not say."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None


def _usage(data: object) -> Usage:
    usage = data.get("usage") if isinstance(data, dict) else None
    if not isinstance(usage, dict):
        return Usage()

    def count(name: str) -> int | None:
        value = usage.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    cost = usage.get("cost")
    return Usage(
        prompt_tokens=count("prompt_tokens"),
        completion_tokens=count("completion_tokens"),
        cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
    )


class RequestBody(TypedDict):
    """The JSON a provider is sent (see the table in the module docstring)."""

    model: str
    max_tokens: int
    temperature: float
    top_p: float
    stream: bool
    messages: NotRequired[list[dict[str, str]]]
    prompt: NotRequired[str]
    suffix: NotRequired[str]
    stop: NotRequired[list[str]]


class ProviderError(Exception):
    """A call that gave no usable text. ``reason``: timeout, busy, no_key, connect, http,
    bad_response. ``detail`` is safe to log and to show (no body, URL secret or key)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class _Kind:
    route: str
    chat: bool
    text_path: tuple[str | int, ...] = field(default=())

    def body(self, config: ProviderConfig, prompt: Prompt, gen: Generation) -> RequestBody:
        body: RequestBody = {
            "model": config.remote_model,
            "max_tokens": gen.max_tokens,
            "temperature": gen.temperature,
            "top_p": gen.top_p,
            "stream": False,
        }
        if self.chat:
            body["messages"] = list(prompt.messages)
            stop = list(prompt.stop[:CHAT_MAX_STOP])
        else:
            body["prompt"] = prompt.prefix
            body["suffix"] = prompt.suffix
            stop = list(prompt.stop)
        if stop:
            body["stop"] = stop
        return body

    def text(self, data: Any) -> str:
        value = data
        for step in self.text_path:
            value = value[step]
        if value is None:  # some servers send null content for an empty answer
            return ""
        if not isinstance(value, str):
            raise TypeError("text is not a string")
        return value


KINDS: dict[str, _Kind] = {
    ProviderKind.OPENAI_CHAT: _Kind(
        "/chat/completions", True, ("choices", 0, "message", "content")
    ),
    ProviderKind.OPENAI_COMPLETION: _Kind("/completions", False, ("choices", 0, "text")),
    ProviderKind.MISTRAL_FIM: _Kind(
        "/fim/completions", False, ("choices", 0, "message", "content")
    ),
}


def endpoint(config: ProviderConfig) -> str:
    return config.base_url.rstrip("/") + KINDS[config.kind].route


def request_body(config: ProviderConfig, prompt: Prompt, gen: Generation) -> RequestBody:
    return KINDS[config.kind].body(config, prompt, gen)


def _headers(config: ProviderConfig) -> dict[str, str]:
    headers = {"User-Agent": USER_AGENT}
    if not config.api_key_env:
        return headers
    key = os.environ.get(config.api_key_env)
    if not key:
        raise ProviderError("no_key", f"environment variable {config.api_key_env} is not set")
    return {**headers, "Authorization": f"Bearer {key}"}


async def complete(
    http: httpx.AsyncClient,
    config: ProviderConfig,
    prompt: Prompt,
    gen: Generation,
) -> str:
    """The raw text of one completion. The caller enforces the deadline (asyncio timeout);
    httpx's own timeouts are per read/write, so they alone would not bound a slow drip."""
    text, _ = await complete_with_usage(http, config, prompt, gen)
    return text


async def complete_with_usage(
    http: httpx.AsyncClient,
    config: ProviderConfig,
    prompt: Prompt,
    gen: Generation,
) -> tuple[str, Usage]:
    """`complete`, with the token counts (and cost) the provider reported for the call."""
    kind = KINDS[config.kind]
    headers = _headers(config)
    try:
        response = await http.post(
            endpoint(config), json=kind.body(config, prompt, gen), headers=headers
        )
    except httpx.TimeoutException:
        raise ProviderError("timeout", "no answer in time") from None
    except httpx.HTTPError as exc:
        raise ProviderError("connect", type(exc).__name__) from None
    if response.status_code != 200:
        raise ProviderError("http", f"HTTP {response.status_code}")
    try:
        data = response.json()
        return kind.text(data), _usage(data)
    except (ValueError, LookupError, TypeError):
        raise ProviderError("bad_response", "no completion text in the answer") from None
