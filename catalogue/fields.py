"""The serializer field for a model key as clients send it, resolved through the catalogue."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.fields import empty

from .selectors import CatalogueEntry, resolve_model_key


class ModelKeyField(serializers.CharField):
    """A model key as clients send it, resolved through the catalogue and its aliases."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", 128)
        super().__init__(**kwargs)

    def run_validation(self, data: object = empty) -> CatalogueEntry:
        key = super().run_validation(data)
        entry = resolve_model_key(key)
        if entry is None:
            raise serializers.ValidationError(
                f"Unknown model key '{key}': it is neither a catalogue model nor an alias.",
                code="unknown_model",
            )
        return entry
