"""Serializer fields shared by the ingest routes: model keys, code text, latencies."""

from __future__ import annotations

import math

from django.conf import settings
from rest_framework import serializers

from leaderboard.selectors import CatalogueEntry, resolve_model_key


class ModelKeyField(serializers.CharField):
    """A model key as clients send it, resolved through the catalogue and its aliases."""

    def __init__(self, **kwargs):
        kwargs.setdefault("max_length", 128)
        super().__init__(**kwargs)

    def run_validation(self, data=serializers.empty) -> CatalogueEntry:
        key = super().run_validation(data)
        entry = resolve_model_key(key)
        if entry is None:
            raise serializers.ValidationError(
                f"Unknown model key '{key}': it is neither a catalogue model nor an alias.",
                code="unknown_model",
            )
        return entry


def code_field(**kwargs) -> serializers.CharField:
    """Code text: never trimmed, bounded, optional. Kept only under Research privacy."""
    return serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=settings.ARENA_MAX_CODE_CHARS,
        default="",
        **kwargs,
    )


class FiniteFloatField(serializers.FloatField):
    """A float that must be finite and inside [min_value, max_value]."""

    default_error_messages = {"not_finite": "Must be a finite number (not NaN or infinity)."}

    def to_internal_value(self, data) -> float:
        if isinstance(data, bool):
            self.fail("invalid")
        value = super().to_internal_value(data)
        if not math.isfinite(value):
            self.fail("not_finite")
        return value


def latency_field(*, unit: str) -> FiniteFloatField:
    """Latency in `unit` ("ms" or "s"); zero or more, at most ARENA_MAX_LATENCY_MS."""
    limit = settings.ARENA_MAX_LATENCY_MS / (1000.0 if unit == "s" else 1.0)
    return FiniteFloatField(
        required=False, allow_null=True, default=None, min_value=0.0, max_value=limit
    )


class StrictIntegerField(serializers.IntegerField):
    """An integer that refuses booleans, floats with a fraction and numeric strings."""

    def to_internal_value(self, data) -> int:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        if isinstance(data, float) and not data.is_integer():
            self.fail("invalid")
        return super().to_internal_value(data)
