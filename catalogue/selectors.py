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


def merge_targets() -> dict[int, int]:
    """Model id -> the id its votes count for (itself unless merged, chains followed)."""
    parent = dict(ArenaModel.objects.values_list("id", "merged_into_id"))
    resolved: dict[int, int] = {}
    for pk in parent:
        seen, cur = {pk}, pk
        while parent.get(cur) is not None and parent[cur] not in seen:
            cur = parent[cur]
            seen.add(cur)
        resolved[pk] = cur
    return resolved


def _load() -> dict[str, CatalogueEntry]:
    models = {
        pk: (key, vis) for pk, key, vis in ArenaModel.objects.values_list("id", "key", "visibility")
    }
    target = merge_targets()

    def entry(pk: int) -> CatalogueEntry:
        final = target.get(pk, pk)
        key, visibility = models[final]
        return CatalogueEntry(final, key, visibility)

    entries = {key: entry(pk) for pk, (key, _) in models.items()}
    for alias, pk in ModelAlias.objects.values_list("key", "model_id"):
        entries[alias] = entry(pk)
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
