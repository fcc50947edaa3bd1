"""Reads of the model catalogue, with a small per-process cache for the ingest hot path."""

from __future__ import annotations

import time
from dataclasses import dataclass

from .models import ArenaModel, ModelAlias, Visibility

# Votes name models by key on every request; one catalogue read per few seconds per
# process keeps that off the database. Saves in this process clear it at once (signals).
_CACHE_SECONDS = 5.0
_cache: dict[str, CatalogueEntry] | None = None
_cache_loaded_at = 0.0


@dataclass(frozen=True)
class CatalogueEntry:
    id: int
    key: str
    visibility: str


def clear_catalogue_cache() -> None:
    global _cache
    _cache = None


def _load() -> dict[str, CatalogueEntry]:
    entries: dict[str, CatalogueEntry] = {}
    for pk, key, visibility in ArenaModel.objects.values_list("id", "key", "visibility"):
        entries[key] = CatalogueEntry(pk, key, visibility)
    for alias, pk, key, visibility in ModelAlias.objects.values_list(
        "key", "model_id", "model__key", "model__visibility"
    ):
        entries[alias] = CatalogueEntry(pk, key, visibility)
    return entries


def catalogue() -> dict[str, CatalogueEntry]:
    """Every key clients may send (own keys and aliases) mapped to its model."""
    global _cache, _cache_loaded_at
    now = time.monotonic()
    if _cache is None or now - _cache_loaded_at > _CACHE_SECONDS:
        _cache = _load()
        _cache_loaded_at = now
    return _cache


def resolve_model_key(key: str) -> CatalogueEntry | None:
    return catalogue().get(key)


def listed_model_keys() -> list[str]:
    """Keys shown to clients (`/list_models`): models that are public or private."""
    shown = {Visibility.PUBLIC, Visibility.PRIVATE}
    return sorted(ArenaModel.objects.filter(visibility__in=shown).values_list("key", flat=True))
