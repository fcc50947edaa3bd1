"""Serializer fields of the vote routes: code text (and prompts) and latencies."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from core.fields import CodeTextField, FiniteFloatField


def code_field(*, field: type[CodeTextField] = CodeTextField, **kwargs: Any) -> CodeTextField:
    """Code text: never trimmed, bounded, optional, NULs dropped. Kept only under Research privacy."""
    return field(required=False, max_length=settings.ARENA_MAX_CODE_CHARS, default="", **kwargs)


def latency_field(*, unit: str) -> FiniteFloatField:
    """Latency in `unit` ("ms" or "s"); zero or more, at most ARENA_MAX_LATENCY_MS."""
    limit = settings.ARENA_MAX_LATENCY_MS / (1000.0 if unit == "s" else 1.0)
    return FiniteFloatField(
        required=False, allow_null=True, default=None, min_value=0.0, max_value=limit
    )
