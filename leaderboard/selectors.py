"""Reads of published snapshots: the board of a category, the categories, model pages."""

from __future__ import annotations

import datetime as dt
from typing import NotRequired, TypedDict

import numpy as np
from django.core.cache import cache
from django.db.models import OuterRef, Subquery

from analysis.grouping import GroupedCounts
from catalogue.models import ArenaModel, Visibility
from core import hotcache

from .models import Snapshot, SnapshotRow, SnapshotSlice
from .slice_labels import category_label

GROUPED_FIELDS = ("a", "b", "outcome", "count")

Matrix = list[list[float]]


class SnapshotMeta(TypedDict):
    id: int
    computed_at: str
    battles: int
    users: int
    simulated_battles: int
    userless_battles: int
    held_battles: int
    method: str
    intervals: str
    weights: str
    weights_label: str
    bootstrap_rounds: int
    seed: int
    anchor: str | None
    anchor_value: float
    duration_seconds: float


class SmallSample(TypedDict):
    min: int
    max: int


class TopSlot(TypedDict):
    p: float
    lower: float | None
    upper: float | None


class BoardCategory(TypedDict):
    key: str
    dimension: str
    value: str
    label: str
    battles: int
    scale_label: str
    anchor_applied: bool
    robustness: list[dict[str, object]]
    small_sample: SmallSample | None
    controlled: dict[str, object] | None
    top_slot: TopSlot | None


class BoardRow(TypedDict):
    model: str
    display_name: str
    organization: str
    license: str
    rating: float | None
    ci_lower: float | None
    ci_upper: float | None
    bootstrap_median: float | None
    rank: int | None
    rank_change: int | None
    rank_change_clear: bool | None
    votes: int
    avg_win_rate: float | None
    position_adjusted_rating: float | None
    controlled_rating: float | None
    controlled_ci_lower: float | None
    controlled_ci_upper: float | None
    controlled_rank: int | None
    latency_p50_ms: float | None
    latency_p90_ms: float | None
    latency_samples: int | None


class Board(TypedDict):
    snapshot: SnapshotMeta
    category: BoardCategory
    models: list[BoardRow]
    matrices: dict[str, Matrix]
    has_latency: NotRequired[bool]


class Category(TypedDict):
    key: str
    dimension: str
    value: str
    label: str
    battles: int


class ModelSlice(TypedDict):
    key: str
    dimension: str
    value: str
    label: str
    rating: float | None
    ci_lower: float | None
    ci_upper: float | None
    rank: int | None
    rank_change: int | None
    rank_change_clear: bool | None
    votes: int


# --- Published snapshots -------------------------------------------------------------
PUBLISHED_KEY = "lb:published-id"
BOARD_TTL = 24 * 3600
# A category board whose models have fewer votes than this (median) says it is a small sample.
SMALL_SAMPLE_VOTES = 100


def snapshot_published(snapshot_id: int) -> None:
    """Point readers at a new snapshot; everything cached per snapshot id goes stale with it."""
    cache.set(PUBLISHED_KEY, snapshot_id, 300)
    hotcache.set_published_id(snapshot_id)


def published_snapshot_id() -> int | None:
    """The published snapshot's id (per-process memo for a second, then the shared cache)."""
    return hotcache.published_id(_read_published_id)


def _read_published_id() -> int | None:
    sid: int | None = cache.get(PUBLISHED_KEY)
    if sid is None:
        sid = (
            Snapshot.objects.filter(status=Snapshot.Status.PUBLISHED)
            .order_by("-id")
            .values_list("id", flat=True)
            .first()
        )
        if sid is not None:
            cache.set(PUBLISHED_KEY, sid, 300)
    return sid


def snapshot_published_at(*, snapshot_id: int) -> dt.datetime | None:
    """When a published snapshot was published (its computed_at is set as it is published).

    Keyed by the id, so it never goes stale: the per-process memo answers it after the first
    read, which keeps HTTP revalidation (leaderboard.http_cache) off Redis and the database.
    """
    key = f"lb:published-at:{snapshot_id}"

    def load() -> dt.datetime | None:
        at: dt.datetime | None = cache.get(key)
        if at is None:
            at = (
                Snapshot.objects.filter(pk=snapshot_id, status=Snapshot.Status.PUBLISHED)
                .values_list("computed_at", flat=True)
                .first()
            )
            if at is not None:
                cache.set(key, at, BOARD_TTL)
        return at

    value = hotcache.get(key, load)
    return value if isinstance(value, dt.datetime) else None


def _snapshot_meta(s: Snapshot) -> SnapshotMeta:
    return {
        "id": s.pk,
        "computed_at": s.computed_at.isoformat(),
        "battles": s.battles,
        "users": s.users,
        "simulated_battles": s.simulated_battles,
        "userless_battles": s.userless_battles,
        "held_battles": s.held_battles,
        "method": s.method,
        "intervals": s.intervals,
        "weights": s.weights,
        "weights_label": s.weights_label,
        "bootstrap_rounds": s.rounds,
        "seed": s.seed,
        "anchor": s.anchor or None,
        "anchor_value": s.anchor_value,
        "duration_seconds": round(s.duration_seconds, 3),
    }


def _robustness(entries: list[dict[str, str]]) -> list[dict[str, object]]:
    """The stored places' robustness with display names (entries of an older layout, which
    only compared neighbours, are left out)."""
    entries = [e for e in entries if "searched" in e]
    keys = {e["upper"] for e in entries} | {e["challenger"] for e in entries if e["challenger"]}
    keys |= {e["added_by"] for e in entries if e.get("added_by")}
    names = dict(ArenaModel.objects.filter(key__in=keys).values_list("key", "display_name"))
    return [
        {
            **e,
            "upper_name": names.get(e["upper"], e["upper"]),
            "challenger_name": names.get(e["challenger"], e["challenger"]),
            "added_by_name": names.get(e.get("added_by") or "", e.get("added_by")),
        }
        for e in entries
    ]


def small_sample(votes: list[int]) -> SmallSample | None:
    """{min, max} votes per model when the median is below SMALL_SAMPLE_VOTES, else None."""
    if not votes or sorted(votes)[len(votes) // 2] >= SMALL_SAMPLE_VOTES:
        return None
    return {"min": min(votes), "max": max(votes)}


def _board_category(slice_: SnapshotSlice, rows: list[SnapshotRow]) -> BoardCategory:
    return {
        "key": slice_.key,
        "dimension": slice_.dimension,
        "value": slice_.value,
        "label": category_label(slice_.dimension, slice_.value),
        "battles": slice_.battles,
        "scale_label": slice_.scale_label,
        "anchor_applied": slice_.anchor_applied,
        "robustness": _robustness(slice_.robustness),
        "small_sample": None if slice_.key == "overall" else small_sample([r.votes for r in rows]),
        # Overall board: the controlled fit's coefficients and what it read (None elsewhere).
        "controlled": slice_.controlled,
        "top_slot": None
        if slice_.top_slot_p is None
        else {
            "p": slice_.top_slot_p,
            "lower": slice_.top_slot_lower,
            "upper": slice_.top_slot_upper,
        },
    }


def _board_row(r: SnapshotRow) -> BoardRow:
    return {
        "model": r.model.key,
        "display_name": r.model.display_name,
        "organization": r.model.organization,
        "license": r.model.license,
        "rating": r.rating,
        "ci_lower": r.ci_lower,
        "ci_upper": r.ci_upper,
        "bootstrap_median": r.median,
        "rank": r.rank,
        "rank_change": r.rank_change,
        "rank_change_clear": r.rank_change_clear,
        "votes": r.votes,
        "avg_win_rate": r.avg_win_rate,
        "position_adjusted_rating": r.adjusted_rating,
        "controlled_rating": r.controlled_rating,
        "controlled_ci_lower": r.controlled_ci_lower,
        "controlled_ci_upper": r.controlled_ci_upper,
        "controlled_rank": r.controlled_rank,
        "latency_p50_ms": r.latency_p50_ms,
        "latency_p90_ms": r.latency_p90_ms,
        "latency_samples": r.latency_samples,
    }


def _build_board(snapshot_id: int, category: str) -> Board | None:
    slice_ = (
        SnapshotSlice.objects.select_related("snapshot")
        .filter(snapshot_id=snapshot_id, key=category)
        .first()
    )
    if slice_ is None:
        return None
    rows = list(
        SnapshotRow.objects.filter(slice=slice_, public=True)
        .select_related("model")
        .order_by("rank", "-rating")
    )
    shown = [r.model.key for r in rows]
    order: list[str] = slice_.models_order
    index = [order.index(k) for k in shown]

    def sub(matrix: Matrix) -> Matrix:
        return [[matrix[i][j] for j in index] for i in index]

    matrices: dict[str, Matrix] = slice_.matrices
    return {
        "snapshot": _snapshot_meta(slice_.snapshot),
        "category": _board_category(slice_, rows),
        "models": [_board_row(r) for r in rows],
        "matrices": {name: sub(m) for name, m in matrices.items()},
    }


def board(*, category: str = "overall", snapshot_id: int | None = None) -> Board | None:
    """The public board of one category of a snapshot (default: the published one), cached."""
    sid = snapshot_id or published_snapshot_id()
    if sid is None:
        return None
    key = f"lb:board:{sid}:{category}"
    data: Board | None = cache.get(key)
    if data is None:
        data = _build_board(sid, category)
        if data is None:
            return None
        data["has_latency"] = any(m["latency_p50_ms"] is not None for m in data["models"])
        cache.set(key, data, BOARD_TTL)
    return data


def categories(*, snapshot_id: int | None = None) -> list[Category]:
    """Slices of the published snapshot with their dimension and battle counts."""
    sid = snapshot_id or published_snapshot_id()
    if sid is None:
        return []
    key = f"lb:categories:{sid}"
    data: list[Category] | None = cache.get(key)
    if data is None:
        data = [
            {"key": k, "dimension": d, "value": v, "label": category_label(d, v), "battles": n}
            for k, d, v, n in SnapshotSlice.objects.filter(snapshot_id=sid)
            .order_by("id")
            .values_list("key", "dimension", "value", "battles")
        ]
        cache.set(key, data, BOARD_TTL)
    return data


# --- Model pages ----------------------------------------------------------------------
def public_model(key: str) -> ArenaModel | None:
    """A model with a public page: on the board, or retired (its history kept). Never hidden/private."""
    return ArenaModel.objects.filter(
        key=key, visibility__in=(Visibility.PUBLIC, Visibility.RETIRED)
    ).first()


def retired_count() -> int:
    return ArenaModel.objects.filter(visibility=Visibility.RETIRED).count()


def retired_models(*, category: str = "overall") -> list[dict[str, object]]:
    """Retired models with their last line on this category's board while they were public."""
    last_row = (
        SnapshotRow.objects.filter(
            model_id=OuterRef("pk"),
            slice__key=category,
            public=True,
            slice__snapshot__status=Snapshot.Status.PUBLISHED,
        )
        .order_by("-slice__snapshot_id")
        .values("id")[:1]
    )
    retired = list(
        ArenaModel.objects.filter(visibility=Visibility.RETIRED)
        .annotate(last_row=Subquery(last_row))
        .order_by("-retired_at", "key")
    )
    rows = SnapshotRow.objects.select_related("slice__snapshot").in_bulk(
        [m.last_row for m in retired if m.last_row is not None]
    )
    out: list[dict[str, object]] = []
    for m in retired:
        row = rows.get(m.last_row)
        out.append(
            {
                "model": m.key,
                "display_name": m.display_name,
                "retired_at": m.retired_at,
                "rating": row.rating if row else None,
                "ci_lower": row.ci_lower if row else None,
                "ci_upper": row.ci_upper if row else None,
                "votes": row.votes if row else 0,
                "last_on_board": row.slice.snapshot.computed_at if row else None,
            }
        )
    return out


def model_history(*, model_id: int) -> list[dict[str, object]]:
    """The model's overall rating in every kept snapshot, oldest first."""
    sid = published_snapshot_id()
    key = f"lb:history:{sid}:{model_id}"
    data: list[dict[str, object]] | None = cache.get(key)
    if data is None:
        rows = (
            SnapshotRow.objects.filter(
                model_id=model_id,
                slice__key="overall",
                public=True,
                slice__snapshot__status=Snapshot.Status.PUBLISHED,
            )
            .order_by("slice__snapshot_id")
            .values_list(
                "slice__snapshot__computed_at", "rating", "ci_lower", "ci_upper", "rank", "votes"
            )
        )
        data = [
            {
                "computed_at": t.isoformat(),
                "rating": r,
                "ci_lower": lo,
                "ci_upper": hi,
                "rank": rank,
                "votes": v,
            }
            for t, r, lo, hi, rank, v in rows
        ]
        cache.set(key, data, BOARD_TTL)
    return data


def model_slices(*, model_id: int) -> list[ModelSlice]:
    """The model's line on every slice board of the published snapshot."""
    sid = published_snapshot_id()
    if sid is None:
        return []
    rows = (
        SnapshotRow.objects.filter(model_id=model_id, slice__snapshot_id=sid, public=True)
        .exclude(slice__key="overall")
        .order_by("slice__dimension", "slice__value")
        .values_list(
            "slice__key",
            "slice__dimension",
            "slice__value",
            "rating",
            "ci_lower",
            "ci_upper",
            "rank",
            "rank_change",
            "rank_change_clear",
            "votes",
        )
    )
    return [
        {
            "key": k,
            "dimension": d,
            "value": v,
            "label": category_label(d, v),
            "rating": r,
            "ci_lower": lo,
            "ci_upper": hi,
            "rank": rank,
            "rank_change": change,
            "rank_change_clear": clear,
            "votes": n,
        }
        for k, d, v, r, lo, hi, rank, change, clear, n in rows
    ]


def model_opponents(*, board_data: Board, key: str) -> list[dict[str, object]]:
    """Observed and predicted win rate of `key` against each public opponent."""
    keys = [m["model"] for m in board_data["models"]]
    if key not in keys:
        return []
    i = keys.index(key)
    m = board_data["matrices"]
    return [
        {
            "model": other["model"],
            "display_name": other["display_name"],
            "win_fraction": m["win_fraction"][i][j],
            "predicted": m["predicted_win_rate"][i][j],
            "battles": m["battle_count"][i][j],
        }
        for j, other in enumerate(board_data["models"])
        if j != i
    ]


def overall_counts(*, snapshot_id: int | None = None) -> GroupedCounts | None:
    """The grouped counts the published overall board was fitted on (per-process memo)."""
    sid = snapshot_id or published_snapshot_id()
    if sid is None:
        return None

    def load() -> GroupedCounts | None:
        data = (
            SnapshotSlice.objects.filter(snapshot_id=sid, key="overall")
            .values_list("counts", flat=True)
            .first()
        )
        if not data:
            return None
        a, b, outcome, count = (np.asarray(data[f], dtype=np.int64) for f in GROUPED_FIELDS)
        return GroupedCounts(models=tuple(data["models"]), a=a, b=b, outcome=outcome, count=count)

    value = hotcache.get(f"lb:overall-counts:{sid}", load)
    return value if isinstance(value, GroupedCounts) else None
