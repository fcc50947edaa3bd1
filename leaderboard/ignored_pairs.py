"""Ignored pairs for the model page: how often developers took neither of a pair's completions.

A pair is *shown* when both of its `/add_completion` logs arrived: two `CompletionLog` rows
with the same pair id, at pair index 0 (top) and 1 (bottom). A row the pair server wrote
itself counts only once the extension's log merged into it (its client version is set: the
server never writes one); pairs whose logs carry no pair id (the public extension's own
pairs, not served here) cannot be linked to their vote and are not counted. A shown pair is
*ignored* when no vote with its pair id was received within `ARENA_IGNORED_WINDOW_MINUTES`
of the later of its two logs (excluded votes still count as a vote: someone chose).

Only pairs whose window had elapsed when the published snapshot was published count, so the
figure is a function of the snapshot, like the rest of the page and its cache
(leaderboard.page_cache, http_cache). One GROUP BY per (top, bottom) model counts shown and
ignored pairs; merged keys count for their model; `analysis.ignored.ignored_rates` turns the
counts into rates. Cached per snapshot id.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.db.models import (
    Count,
    DateTimeField,
    Exists,
    ExpressionWrapper,
    OuterRef,
    Q,
    Subquery,
)
from django.db.models.functions import Greatest

from analysis.ignored import ignored_rates
from catalogue.models import ArenaModel
from catalogue.selectors import merge_targets
from ingest.models import Battle, CompletionLog

from . import selectors


@dataclass(frozen=True)
class IgnoredSummary:
    """Per model key: (shown, ignored) pairs; and the arena-wide totals."""

    per_model: dict[str, tuple[int, int]]
    shown: int
    ignored: int
    window_minutes: int

    @property
    def overall_rate(self) -> float | None:
        return self.ignored / self.shown if self.shown else None

    def model(self, key: str) -> dict[str, object] | None:
        """What the model page shows; None when the model was in no counted pair."""
        shown, ignored = self.per_model.get(key, (0, 0))
        if not shown:
            return None
        arena = self.overall_rate
        return {
            "shown": shown,
            "ignored": ignored,
            "rate": ignored / shown,
            "percent": f"{ignored / shown:.0%}",
            "arena_rate": arena,
            "arena_percent": None if arena is None else f"{arena:.0%}",
            "window_minutes": self.window_minutes,
        }


# PostgreSQL: the two logs of a pair joined on the pair id, the vote (pair ids are unique
# on battles) left-joined: one pass, no correlated subquery per log.
_PAIRS_SQL = """
WITH shown AS (
    SELECT t.pair_id, t.model_id AS top_id, b.model_id AS bottom_id,
           GREATEST(t.received_at, b.received_at) + %(seconds)s * INTERVAL '1 second' AS deadline
    FROM {log} t
    JOIN {log} b ON b.pair_id = t.pair_id AND b.pair_index = 1
                AND (NOT b.served_by_us OR b.client_version <> '')
    WHERE t.pair_index = 0 AND t.pair_id <> '' AND (NOT t.served_by_us OR t.client_version <> '')
)
SELECT s.top_id, s.bottom_id, COUNT(DISTINCT s.pair_id),
       COUNT(DISTINCT s.pair_id) FILTER (WHERE v.id IS NULL)
FROM shown s
LEFT JOIN {battle} v ON v.pair_id = s.pair_id AND v.received_at <= s.deadline
WHERE s.deadline <= %(until)s
GROUP BY s.top_id, s.bottom_id
"""


def pair_counts(*, until: dt.datetime, window: dt.timedelta) -> list[tuple[int, int, int, int]]:
    """(top model id, bottom model id, shown, ignored) over the pairs whose window ended by
    `until`: the one GROUP BY (model ids as stored, merges not applied)."""
    if connection.vendor != "postgresql":
        return pair_counts_portable(until=until, window=window)
    sql = _PAIRS_SQL.format(log=CompletionLog._meta.db_table, battle=Battle._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(sql, {"seconds": window.total_seconds(), "until": until})
        return [(int(t), int(b), int(n), int(i)) for t, b, n, i in cursor.fetchall()]


def pair_counts_portable(
    *, until: dt.datetime, window: dt.timedelta
) -> list[tuple[int, int, int, int]]:
    """The same through the ORM, for the embedded SQLite (correlated subqueries: slower)."""
    arrived = Q(served_by_us=False) | ~Q(client_version="")
    bottom = CompletionLog.objects.filter(arrived, pair_id=OuterRef("pair_id"), pair_index=1)
    bottom = bottom.order_by("received_at")
    voted = Battle.objects.filter(
        pair_id=OuterRef("pair_id"), received_at__lte=OuterRef("deadline")
    )
    rows = (
        CompletionLog.objects.filter(arrived, pair_index=0)
        .exclude(pair_id="")
        .annotate(
            bottom_model=Subquery(bottom.values("model_id")[:1]),
            bottom_at=Subquery(bottom.values("received_at")[:1]),
        )
        .filter(bottom_model__isnull=False)
        .annotate(
            deadline=ExpressionWrapper(
                Greatest("received_at", "bottom_at") + window, output_field=DateTimeField()
            )
        )
        .filter(deadline__lte=until)
        .annotate(voted=Exists(voted))
        .values("model_id", "bottom_model")
        .annotate(
            shown=Count("pair_id", distinct=True),
            ignored=Count("pair_id", distinct=True, filter=Q(voted=False)),
        )
        .order_by()
    )
    return [(r["model_id"], r["bottom_model"], r["shown"], r["ignored"]) for r in rows]


def _summarise(rows: list[tuple[int, int, int, int]], window_minutes: int) -> IgnoredSummary:
    target = merge_targets()
    top = np.array([target.get(r[0], r[0]) for r in rows], dtype=np.int64)
    bottom = np.array([target.get(r[1], r[1]) for r in rows], dtype=np.int64)
    shown = np.array([r[2] for r in rows], dtype=np.int64)
    ignored = np.array([r[3] for r in rows], dtype=np.int64)
    keep = top != bottom  # a pair of two keys of one model says nothing about it
    top, bottom, shown, ignored = top[keep], bottom[keep], shown[keep], ignored[keep]
    ids, inverse = np.unique(np.concatenate([top, bottom]), return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    names = dict(ArenaModel.objects.filter(pk__in=ids.tolist()).values_list("id", "key"))
    keys = [names[int(pk)] for pk in ids]
    rates = ignored_rates(
        keys, a=inverse[: len(top)], b=inverse[len(top) :], shown=shown, ignored=ignored
    )
    return IgnoredSummary(
        per_model={
            k: (int(rates.shown[i]), int(rates.ignored[i])) for i, k in enumerate(rates.models)
        },
        shown=int(shown.sum()),
        ignored=int(ignored.sum()),
        window_minutes=window_minutes,
    )


def ignored_summary(*, snapshot_id: int | None = None) -> IgnoredSummary | None:
    """Shown and ignored pairs as of the (published) snapshot; None while nothing is published."""
    sid = snapshot_id or selectors.published_snapshot_id()
    if sid is None:
        return None
    published = selectors.snapshot_published_at(snapshot_id=sid)
    if published is None:
        return None
    minutes = int(settings.ARENA_IGNORED_WINDOW_MINUTES)
    key = f"lb:ignored:{sid}:{minutes}"
    summary = cache.get(key)
    if not isinstance(summary, IgnoredSummary):
        rows = pair_counts(until=published, window=dt.timedelta(minutes=minutes))
        summary = _summarise(rows, minutes)
        cache.set(key, summary, selectors.BOARD_TTL)
    return summary
