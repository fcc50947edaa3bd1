"""Slice labels for a vote, computed from its context while the code is still in memory."""

from __future__ import annotations

from analysis.labels import LABELER_VERSION, label_context

from .votes import VoteIn


def label_fields(vote: VoteIn) -> dict:
    """Battle columns holding the slice labels of `vote` (works for every privacy level)."""
    labels = label_context(
        file_type=vote.file_type, prefix=vote.code.prefix, suffix=vote.code.suffix
    )
    return {
        "language": labels.programming_language,
        "natural_language": labels.natural_language,
        "context_tokens": labels.context_tokens if (vote.code.prefix or vote.code.suffix) else None,
        "context_bucket": labels.context_bucket
        if (vote.code.prefix or vote.code.suffix)
        else "unknown",
        "task_type": labels.task_type,
        "labeler_version": LABELER_VERSION,
    }
