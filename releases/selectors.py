"""Reads for releases: the battles a release may hold, what it leaves out, the public list."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.core.files.storage import storages
from django.db.models import QuerySet

from catalogue.models import ArenaModel, Visibility
from catalogue.selectors import merge_targets
from ingest.models import CODE_FIELDS, Battle, BattleSource

from .columns import MEASURES
from .models import DatasetRelease

# Models whose battles a release may hold: the ones the board shows or showed. Private and
# hidden models (not announced) stay out, with their battles.
RELEASED_VISIBILITY = (Visibility.PUBLIC, Visibility.RETIRED)
BATTLE_FIELDS = (
    "pair_id",
    "user_hash",
    "model_a_id",
    "model_b_id",
    "outcome",
    "kind",
    "file_type",
    "language",
    "natural_language",
    "task_type",
    "context_bucket",
    "privacy",
    "source",
    *MEASURES,
    "client_version",
    "received_at",
    "excluded",
)


def release_keys() -> dict[int, str]:
    """Model id -> the key its battles are released under (merges followed), for the models
    a release may name."""
    target = merge_targets()
    shown = dict(
        ArenaModel.objects.filter(visibility__in=RELEASED_VISIBILITY).values_list("id", "key")
    )
    return {pk: shown[t] for pk, t in target.items() if t in shown}


def candidates(*, release: DatasetRelease) -> QuerySet[Battle]:
    """The battles old enough for `release`, before the options' and the models' filters."""
    return Battle.objects.filter(received_at__lt=release.cutoff)


def chosen(*, release: DatasetRelease) -> QuerySet[Battle]:
    """`candidates` less what the options leave out (another arena's votes always)."""
    qs = candidates(release=release).exclude(source=BattleSource.EXTERNAL)
    if not release.include_simulated:
        qs = qs.exclude(source=BattleSource.SIMULATED)
    if not release.include_excluded:
        qs = qs.exclude(excluded=True)
    return qs


def left_out(*, release: DatasetRelease) -> dict[str, int]:
    """How many battles each rule keeps out of `release`, each counted by the first rule
    that applies (the card's counts)."""
    old = candidates(release=release)
    counts = {"newer_than_cutoff": Battle.objects.count() - old.count()}
    rest = old.exclude(source=BattleSource.EXTERNAL)
    counts["other_arenas"] = old.count() - rest.count()
    if not release.include_simulated:
        counts["simulated"] = rest.filter(source=BattleSource.SIMULATED).count()
        rest = rest.exclude(source=BattleSource.SIMULATED)
    if not release.include_excluded:
        counts["excluded"] = rest.filter(excluded=True).count()
    return counts


def battle_rows(*, release: DatasetRelease) -> Iterator[dict[str, Any]]:
    """The chosen battles as dicts, oldest first; code fields only for Research votes (a
    LEFT JOIN: other votes have none, and would never get one here)."""
    code = [f"code__{f}" for f in CODE_FIELDS]
    qs = chosen(release=release).order_by("received_at", "id")
    for row in qs.values(*BATTLE_FIELDS, *code).iterator(chunk_size=5000):
        research = row["privacy"] == "Research"
        for field in CODE_FIELDS:
            value = row.pop(f"code__{field}")
            row[field] = value if research else None
        yield row


def public_releases() -> list[DatasetRelease]:
    return list(
        DatasetRelease.objects.filter(status=DatasetRelease.Status.READY, public=True).order_by(
            "-cutoff", "-created_at"
        )
    )


def file_url(*, release: DatasetRelease, name: str) -> str:
    """Where the web server (or the object store) serves a file of the release."""
    return storages["releases"].url(f"{release.version}/{name}")
