"""Serializer fields of the vote routes: code text and latencies."""

from __future__ import annotations

from django.conf import settings

from core.fields import FiniteFloatField, StrictCharField


def code_field(**kwargs) -> StrictCharField:
    """Code text: never trimmed, bounded, optional. Kept only under Research privacy."""
    return StrictCharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=settings.ARENA_MAX_CODE_CHARS,
        default="",
        **kwargs,
    )


def latency_field(*, unit: str) -> FiniteFloatField:
    """Latency in `unit` ("ms" or "s"); zero or more, at most ARENA_MAX_LATENCY_MS."""
    limit = settings.ARENA_MAX_LATENCY_MS / (1000.0 if unit == "s" else 1.0)
    return FiniteFloatField(
        required=False, allow_null=True, default=None, min_value=0.0, max_value=limit
    )
