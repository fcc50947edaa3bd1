"""Slice labels of a vote as battle columns, computed from its context while the code is in memory.

The one place that maps the labeller's result onto battle columns: used at ingest for every
vote (every privacy level) and by the back-fill (`ingest.relabel`) for stored Research code.
"""

from __future__ import annotations

from functools import lru_cache

from analysis.labels import LABELER_VERSION, label_context

from .votes import VoteIn

LABEL_COLUMNS = (
    "language",
    "natural_language",
    "context_tokens",
    "context_bucket",
    "task_type",
    "labeler_version",
)


def _columns(labels, *, has_context: bool) -> dict:
    return {
        "language": labels.programming_language,
        "natural_language": labels.natural_language,
        "context_tokens": labels.context_tokens if has_context else None,
        "context_bucket": labels.context_bucket if has_context else "unknown",
        "task_type": labels.task_type,
        "labeler_version": LABELER_VERSION,
    }


@lru_cache(maxsize=256)
def _columns_without_code(file_type: str) -> dict:
    # Without a prefix or suffix the labels depend on the file type alone (most batch and
    # extension posts that send lengths only, every Private vote without code), so the
    # classifiers need not run again for each vote. Bounded: file types are few, and an
    # odd one only evicts another.
    return _columns(label_context(file_type=file_type, prefix="", suffix=""), has_context=False)


def label_columns(*, file_type: str, prefix: str, suffix: str) -> dict:
    """Battle columns (`LABEL_COLUMNS`) holding the slice labels of this context."""
    if not (prefix or suffix):
        return dict(_columns_without_code(file_type))  # a copy: callers may change it
    labels = label_context(file_type=file_type, prefix=prefix, suffix=suffix)
    return _columns(labels, has_context=True)


def label_fields(vote: VoteIn) -> dict:
    """The label columns of `vote` (works for every privacy level)."""
    return label_columns(file_type=vote.file_type, prefix=vote.code.prefix, suffix=vote.code.suffix)
