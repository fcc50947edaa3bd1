"""How the evaluation suites call a model, and run many items at once.

The suites never talk HTTP themselves: they are handed a callable that sends one request and
returns the model's raw text (or raises). In the product that callable wraps
``serving.providers.complete`` for the run's provider; in tests it is a stub.

* `ChatFn` takes chat messages (a tuple of ``{"role", "content"}``) and returns the answer text.
  Generation settings (greedy: temperature 0) belong to the callable, not to the suite.
* `call` runs one request, timing it and turning an exception into a short, safe error string:
  the ``reason: detail`` of errors that carry them (``serving.providers.ProviderError`` does,
  and keeps bodies, URLs and keys out of both), otherwise only the exception's class name,
  since a foreign exception's message may quote the request (that is, the code).
* `map_items` applies a function to items on a thread pool, preserving order.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

Messages = tuple[dict[str, str], ...]
ChatFn = Callable[[Messages], str]

T = TypeVar("T")
R = TypeVar("R")
A = TypeVar("A")


@dataclass(frozen=True)
class Call:
    """One request's outcome: the text, or an error; and how long it took."""

    text: str | None
    error: str | None
    latency_s: float


def safe_error(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    if isinstance(reason, str):
        detail = getattr(exc, "detail", "")
        return f"{reason}: {detail}" if detail else reason
    return type(exc).__name__


def call(fn: Callable[[A], str], request: A) -> Call:
    """Send one request through ``fn``; never raises (except for KeyboardInterrupt etc.)."""
    started = time.perf_counter()
    try:
        text = fn(request)
    except Exception as exc:
        return Call(None, safe_error(exc), time.perf_counter() - started)
    if not isinstance(text, str):
        return Call(None, "bad_response: not text", time.perf_counter() - started)
    return Call(text, None, time.perf_counter() - started)


def map_items(fn: Callable[[T], R], items: Iterable[T], *, max_workers: int = 4) -> list[R]:
    """``[fn(item) for item in items]`` on ``max_workers`` threads (1: in this thread)."""
    todo: Sequence[T] = list(items)
    if max_workers <= 1 or len(todo) <= 1:
        return [fn(item) for item in todo]
    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="evaluation") as pool:
        return list(pool.map(fn, todo))
