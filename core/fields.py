"""Serializer fields shared by the API routes: strict numbers."""

from __future__ import annotations

import math

from rest_framework import serializers


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


class StrictIntegerField(serializers.IntegerField):
    """An integer that refuses booleans, floats with a fraction and numeric strings."""

    def to_internal_value(self, data) -> int:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        if isinstance(data, float) and not data.is_integer():
            self.fail("invalid")
        return super().to_internal_value(data)
