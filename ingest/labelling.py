"""Slice labels of a vote as battle columns, computed from its context while the code is in memory.

The one place that maps the labellers' results onto battle columns: used at ingest for every
vote (every privacy level) and by the back-fill (`ingest.relabel`) for stored Research code.

A labeller can never fail a vote: each one runs on its own, and an exception in it stores
that label as `unknown` (the others keep their values), logs one line naming the labeller
and the exception type (never its message, which may quote the code), and counts it in
`core.metrics.LABELLER_FAILURES`. The failed part of `labeler_version` reads `x`
(e.g. `pl1.nl1.ctx1.taskx`), so the back-fill sees the row as stale and relabels it once
the labeller is fixed.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

from analysis.labels import context_length, natural_language, programming_language, task_type
from core.metrics import LABELLER_FAILURES

from .votes import VoteIn

log = logging.getLogger(__name__)
T = TypeVar("T")

LABEL_COLUMNS = (
    "language",
    "natural_language",
    "context_tokens",
    "context_bucket",
    "task_type",
    "labeler_version",
)
UNKNOWN = "unknown"


def _guarded(name: str, compute: Callable[[], T], failed: set[str]) -> T | None:
    try:
        return compute()
    except Exception as exc:
        failed.add(name)
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        # Type and place only: the message of an exception may quote the code.
        log.warning(
            "Labeller %s failed (%s at %s:%s); stored as unknown",
            name,
            type(exc).__name__,
            frame.filename.rsplit("/", 1)[-1],
            frame.lineno,
        )
        LABELLER_FAILURES.labels(labeller=name).inc()
        return None


def _version(failed: set[str]) -> str:
    parts = (
        ("pl", "programming_language", programming_language.VERSION),
        ("nl", "natural_language", natural_language.VERSION),
        ("ctx", "context_length", context_length.VERSION),
        ("task", "task_type", task_type.VERSION),
    )
    return ".".join(f"{tag}{'x' if name in failed else v}" for tag, name, v in parts)


def _columns(*, file_type: str, prefix: str, suffix: str, has_context: bool) -> dict[str, Any]:
    failed: set[str] = set()
    # Looked up on the modules at each call, so a replaced labeller (tests, a plug-in
    # task classifier) is the one guarded.
    pl, nl, ctx, tt = programming_language, natural_language, context_length, task_type
    lang = _guarded("programming_language", lambda: pl.normalize_language(file_type), failed)
    lang = lang or UNKNOWN
    natural = _guarded(
        "natural_language",
        lambda: nl.detect_natural_language(prefix=prefix, suffix=suffix, programming_language=lang),
        failed,
    )

    def length() -> tuple[int, str]:
        tokens = ctx.context_tokens(prefix=prefix, suffix=suffix)
        return tokens, ctx.context_bucket(tokens)

    tokens, bucket = _guarded("context_length", length, failed) or (None, None)
    task = _guarded(
        "task_type",
        lambda: tt.default_task_type_classifier(
            programming_language=lang, prefix=prefix, suffix=suffix
        ),
        failed,
    )
    return {
        "language": lang,
        "natural_language": natural or UNKNOWN,
        "context_tokens": tokens if has_context else None,
        "context_bucket": (bucket or UNKNOWN) if has_context else UNKNOWN,
        "task_type": task or UNKNOWN,
        "labeler_version": _version(failed),
    }


@lru_cache(maxsize=256)
def _columns_without_code(file_type: str) -> dict[str, Any]:
    # Without a prefix or suffix the labels depend on the file type alone (most batch and
    # extension posts that send lengths only, every Private vote without code), so the
    # classifiers need not run again for each vote. Bounded: file types are few, and an
    # odd one only evicts another.
    return _columns(file_type=file_type, prefix="", suffix="", has_context=False)


def label_columns(*, file_type: str, prefix: str, suffix: str) -> dict[str, Any]:
    """Battle columns (`LABEL_COLUMNS`) holding the slice labels of this context."""
    if not (prefix or suffix):
        return dict(_columns_without_code(file_type))  # a copy: callers may change it
    return _columns(file_type=file_type, prefix=prefix, suffix=suffix, has_context=True)


def label_fields(vote: VoteIn) -> dict[str, Any]:
    """The label columns of `vote` (works for every privacy level)."""
    return label_columns(file_type=vote.file_type, prefix=vote.code.prefix, suffix=vote.code.suffix)
