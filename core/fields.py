"""Serializer fields shared by the API routes: strict text and strict numbers.

DRF's own fields coerce: a CharField takes 42 and stores "42", a FloatField takes "0.84".
The schema says string and number, so these take exactly that and refuse the rest with a
400 naming the field (schemathesis checks the two agree: tests/reliability/test_schema_fuzz.py).
"""

from __future__ import annotations

import math

from rest_framework import serializers


class StrictCharField(serializers.CharField):
    """Text that must arrive as a JSON string (not a number)."""

    default_error_messages = {"not_a_string": "Must be a string."}

    def to_internal_value(self, data) -> str:
        if not isinstance(data, str):
            self.fail("not_a_string")
        return super().to_internal_value(data)


class FiniteFloatField(serializers.FloatField):
    """A JSON number (not a string, not a boolean) that is finite and inside [min_value, max_value]."""

    default_error_messages = {"not_finite": "Must be a finite number (not NaN or infinity)."}

    def to_internal_value(self, data) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        value = super().to_internal_value(data)
        if not math.isfinite(value):
            self.fail("not_finite")
        return value


class StrictIntegerField(serializers.IntegerField):
    """An integer that refuses booleans, floats with a fraction and numeric strings."""

    def to_internal_value(self, data) -> int:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        if isinstance(data, float) and not data.is_integer():
            self.fail("invalid")
        return super().to_internal_value(data)
