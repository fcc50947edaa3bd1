"""Reads for win rates by slice: a model x slice-value table per dimension, and whether slicing matters.

For one dimension (task type, programming language, context length, natural language,
completion vs edit) of the published snapshot this gives every public model's rating,
95% interval, votes, rank change and average win rate on each value's board, and the
likelihood-ratio test of ``analysis.slice_test`` (one Bradley-Terry model for all values vs
one per value) with Kendall's tau between each value's ranking and the overall one.

Everything is computed from what the snapshot stores: the rows of each slice board, and
each slice's battle-count and win-fraction matrices (which give the pairwise counts the test
needs). Results are cached per snapshot id, like the boards.
"""

from __future__ import annotations

import math
from typing import Any, TypedDict

from django.core.cache import cache

from analysis.labels import CONTEXT_BUCKETS, TASK_TYPES
from analysis.slice_test import PairCounts, slice_test

from . import selectors
from .aggregation import DIMENSIONS
from .models import SnapshotRow, SnapshotSlice
from .slice_labels import value_label

DEFAULT_DIMENSION = "task_type"


class SliceCell(TypedDict):
    rating: float | None
    ci_lower: float | None
    ci_upper: float | None
    votes: int
    rank: int | None
    rank_change: int | None
    rank_change_clear: bool | None
    avg_win_rate: float | None


class SliceValue(TypedDict):
    value: str
    label: str
    key: str
    battles: int
    small_sample: selectors.SmallSample | None


class SliceModel(TypedDict):
    model: str
    display_name: str
    overall_rating: float | None
    cells: list[SliceCell | None]


class SliceAnalysis(TypedDict):
    snapshot: selectors.SnapshotMeta | dict[str, int]
    dimension: str
    label: str
    values: list[SliceValue]
    models: list[SliceModel]
    # analysis.slice_test's own JSON (TestResult.to_dict), less the ratings.
    test: dict[str, Any] | None


_VALUE_ORDER = {"task_type": TASK_TYPES, "context_bucket": CONTEXT_BUCKETS}


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


def _ordered(dimension: str, slices: list[SnapshotSlice]) -> list[SnapshotSlice]:
    order = _VALUE_ORDER.get(dimension)
    if order:
        rank = {v: i for i, v in enumerate(order)}
        return sorted(slices, key=lambda s: (rank.get(s.value, len(rank)), s.value))
    return sorted(slices, key=lambda s: (-s.battles, s.value))


def _reference(sid: int) -> dict[str, float]:
    """Reference ranking for Kendall's tau: every rated model of the overall board (the test
    uses all models in the matrices; only aggregate numbers are shown, no private names)."""
    return {
        key: float(rating)
        for key, rating in SnapshotRow.objects.filter(
            slice__snapshot_id=sid, slice__key="overall", rating__isnull=False
        ).values_list("model__key", "rating")
        if rating is not None
    }


def _test(sid: int, dimension: str, slices: list[SnapshotSlice]) -> dict[str, Any] | None:
    counts = {
        s.value: PairCounts.from_matrices(
            s.models_order, s.matrices["battle_count"], s.matrices["win_fraction"]
        )
        for s in slices
    }
    test = slice_test(counts, reference=_reference(sid)) if counts else None
    if test is None:
        return None
    test_dict = test.to_dict()
    test_dict.pop("pooled_ratings")
    for value in test_dict["values"]:
        value.pop("ratings")
        value["label"] = value_label(dimension, value["value"])
    return test_dict


def _cells(
    slices: list[SnapshotSlice],
) -> tuple[dict[str, dict[str, SliceCell]], dict[str, str]]:
    """Each public model's cell on each value's board, and the models' display names."""
    cells: dict[str, dict[str, SliceCell]] = {}
    names: dict[str, str] = {}
    for (
        key,
        display,
        value,
        rating,
        lo,
        hi,
        votes,
        rank,
        change,
        clear,
        awr,
    ) in SnapshotRow.objects.filter(slice__in=slices, public=True).values_list(
        "model__key",
        "model__display_name",
        "slice__value",
        "rating",
        "ci_lower",
        "ci_upper",
        "votes",
        "rank",
        "rank_change",
        "rank_change_clear",
        "avg_win_rate",
    ):
        names[key] = display
        cells.setdefault(key, {})[value] = {
            "rating": _finite(rating),
            "ci_lower": _finite(lo),
            "ci_upper": _finite(hi),
            "votes": votes,
            "rank": rank,
            "rank_change": change,
            "rank_change_clear": clear,
            "avg_win_rate": _finite(awr),
        }
    return cells, names


def _build(sid: int, dimension: str) -> SliceAnalysis:
    slices = _ordered(
        dimension,
        list(
            SnapshotSlice.objects.filter(snapshot_id=sid, dimension=dimension).only(
                "id", "key", "value", "battles", "models_order", "matrices"
            )
        ),
    )
    overall = selectors.board(category="overall", snapshot_id=sid)
    test_dict = _test(sid, dimension, slices)
    cells, names = _cells(slices)
    order = [m["model"] for m in overall["models"]] if overall else []
    order += sorted(k for k in cells if k not in order)
    values = [s.value for s in slices]
    return {
        "snapshot": overall["snapshot"] if overall else {"id": sid},
        "dimension": dimension,
        "label": DIMENSIONS[dimension],
        "values": [
            {
                "value": s.value,
                "label": value_label(dimension, s.value),
                "key": s.key,
                "battles": s.battles,
                "small_sample": selectors.small_sample(
                    [c[s.value]["votes"] for c in cells.values() if s.value in c]
                ),
            }
            for s in slices
        ],
        "models": [
            {
                "model": key,
                "display_name": names.get(key) or key,
                "overall_rating": next(
                    (m["rating"] for m in overall["models"] if m["model"] == key), None
                )
                if overall
                else None,
                "cells": [cells.get(key, {}).get(v) for v in values],
            }
            for key in order
            if key in cells
        ],
        "test": test_dict,
    }


def slice_analysis(*, dimension: str, snapshot_id: int | None = None) -> SliceAnalysis | None:
    """The table and test for one dimension of a snapshot (default: published), cached."""
    if dimension not in DIMENSIONS:
        raise KeyError(dimension)
    sid = snapshot_id or selectors.published_snapshot_id()
    if sid is None:
        return None
    key = f"lb:slices:{sid}:{dimension}"
    data: SliceAnalysis | None = cache.get(key)
    if data is None:
        data = _build(sid, dimension)
        cache.set(key, data, selectors.BOARD_TTL)
    return data
