"""The "new" badge: models first rated within `ARENA_NEW_MODEL_DAYS` of the published board.

A model is *first rated* when the earliest published snapshot with a public row for it on
the overall board was published (a model on any slice board is on the overall one too,
as a slice's votes are a subset of the overall votes); the models of the first published
board are the arena's founders and never "new". One aggregate query over the kept
published snapshots gives every model's first rating; the answer is cached per snapshot id.

"Within N days" is measured against the published snapshot's publication time, not the
clock: the badge is then a function of the snapshot like everything else on the pages, so
the per-snapshot page cache and the ETag (leaderboard.http_cache) stay exact. The price is
that a badge can outlive its N days by the age of the published board (a recompute runs at
least every RECOMPUTE_INTERVAL_SECONDS), plus whatever max-age a cache adds.
Old snapshots are thinned to one a day (SNAPSHOT_KEEP_ALL_DAYS), never removed, so the
earliest kept one is at most a day later than the true first rating.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

from django.conf import settings
from django.core.cache import cache
from django.db.models import Min

from . import selectors
from .models import Snapshot, SnapshotRow


def first_rated(*, snapshot_id: int) -> dict[str, dt.datetime]:
    """Model key -> publication time of the first published overall board showing it, up to
    and including `snapshot_id` (cached per snapshot id)."""
    key = f"lb:first-rated:{snapshot_id}"
    data: dict[str, dt.datetime] | None = cache.get(key)
    if data is None:
        data = dict(
            SnapshotRow.objects.filter(
                slice__key="overall",
                public=True,
                slice__snapshot__status=Snapshot.Status.PUBLISHED,
                slice__snapshot_id__lte=snapshot_id,
            )
            .values("model__key")
            .annotate(first=Min("slice__snapshot__computed_at"))
            .values_list("model__key", "first")
        )
        cache.set(key, data, selectors.BOARD_TTL)
    return data


def new_models(*, snapshot_id: int | None = None) -> dict[str, dt.datetime]:
    """Models first rated within ARENA_NEW_MODEL_DAYS before the (published) snapshot was
    published: key -> when first rated. Empty while nothing is published."""
    sid = snapshot_id or selectors.published_snapshot_id()
    if sid is None:
        return {}
    published = selectors.snapshot_published_at(snapshot_id=sid)
    if published is None:
        return {}
    since = published - dt.timedelta(days=settings.ARENA_NEW_MODEL_DAYS)
    first = first_rated(snapshot_id=sid)
    # The models of the arena's first board are its founders, not newcomers: on a fresh
    # site (or the demo) every model would otherwise carry the badge, which tells nothing.
    founded = min(first.values(), default=None)
    return {k: at for k, at in first.items() if at > since and at != founded}


def mark_new(
    rows: Sequence[Mapping[str, object]], *, new: dict[str, dt.datetime]
) -> list[dict[str, object]]:
    """Board rows with `is_new` and `first_rated` (copies: the cached board stays as it is)."""
    return [
        {**r, "is_new": r["model"] in new, "first_rated": new.get(str(r["model"]))} for r in rows
    ]
