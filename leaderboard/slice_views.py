"""Win rates by slice: a model x slice-value table per dimension, and whether slicing matters.

For one dimension (task type, programming language, context length, natural language,
completion vs edit) of the published snapshot this shows every public model's rating,
95% interval, votes, rank change and average win rate on each value's board, and the
likelihood-ratio test of ``analysis.slice_test`` (one Bradley-Terry model for all values vs
one per value) with Kendall's tau between each value's ranking and the overall one.

Everything is computed from what the snapshot stores: the rows of each slice board, and
each slice's battle-count and win-fraction matrices (which give the pairwise counts the test
needs). Results are cached per snapshot id, like the boards.
"""

from __future__ import annotations

import json
import math

import plotly.graph_objects as go
from django.core.cache import cache
from django.http import Http404, HttpResponse
from django.shortcuts import render
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import NotFound

from analysis.labels import CONTEXT_BUCKETS, TASK_TYPES
from analysis.slice_test import PairCounts, slice_test

from . import selectors
from .aggregation import DIMENSIONS
from .api import CachedReadView
from .charts import LAYOUT
from .models import SnapshotRow, SnapshotSlice

DEFAULT_DIMENSION = "task_type"
_VALUE_ORDER = {"task_type": TASK_TYPES, "context_bucket": CONTEXT_BUCKETS}


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


def _ordered(dimension: str, slices: list[SnapshotSlice]) -> list[SnapshotSlice]:
    order = _VALUE_ORDER.get(dimension)
    if order:
        rank = {v: i for i, v in enumerate(order)}
        return sorted(slices, key=lambda s: (rank.get(s.value, len(rank)), s.value))
    return sorted(slices, key=lambda s: (-s.battles, s.value))


def _build(sid: int, dimension: str) -> dict:
    slices = _ordered(
        dimension,
        list(
            SnapshotSlice.objects.filter(snapshot_id=sid, dimension=dimension).only(
                "id", "key", "value", "battles", "models_order", "matrices"
            )
        ),
    )
    overall = selectors.board(category="overall", snapshot_id=sid)
    # Reference ranking for Kendall's tau: every rated model of the overall board (the test
    # uses all models in the matrices; only aggregate numbers are shown, no private names).
    reference = {
        key: rating
        for key, rating in SnapshotRow.objects.filter(
            slice__snapshot_id=sid, slice__key="overall", rating__isnull=False
        ).values_list("model__key", "rating")
    }
    counts = {
        s.value: PairCounts.from_matrices(
            s.models_order, s.matrices["battle_count"], s.matrices["win_fraction"]
        )
        for s in slices
    }
    test = slice_test(counts, reference=reference) if counts else None
    test_dict = None
    if test is not None:
        test_dict = test.to_dict()
        test_dict.pop("pooled_ratings")
        for value in test_dict["values"]:
            value.pop("ratings")

    cells: dict[str, dict[str, dict]] = {}
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
            "avg_win_rate": _finite(awr),
        }
    order = [m["model"] for m in overall["models"]] if overall else []
    order += sorted(k for k in cells if k not in order)
    values = [s.value for s in slices]
    return {
        "snapshot": overall["snapshot"] if overall else {"id": sid},
        "dimension": dimension,
        "label": DIMENSIONS[dimension],
        "values": [{"value": s.value, "key": s.key, "battles": s.battles} for s in slices],
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


def slice_analysis(*, dimension: str, snapshot_id: int | None = None) -> dict | None:
    """The table and test for one dimension of a snapshot (default: published), cached."""
    if dimension not in DIMENSIONS:
        raise KeyError(dimension)
    sid = snapshot_id or selectors.published_snapshot_id()
    if sid is None:
        return None
    key = f"lb:slices:{sid}:{dimension}"
    data = cache.get(key)
    if data is None:
        data = _build(sid, dimension)
        cache.set(key, data, selectors.BOARD_TTL)
    return data


# ------------------------------------------------------------------------------ charts


def _hover(cell: dict | None) -> str:
    if cell is None:
        return "no board (too few votes)"
    parts = []
    if cell["rating"] is not None:
        parts.append(f"rating {cell['rating']:.1f}")
    if cell["ci_lower"] is not None and cell["ci_upper"] is not None:
        parts.append(f"95% interval [{cell['ci_lower']:.1f}, {cell['ci_upper']:.1f}]")
    if cell["avg_win_rate"] is not None:
        parts.append(f"average win rate {cell['avg_win_rate']:.3f}")
    parts.append(f"{cell['votes']} votes")
    if cell["rank"] is not None:
        parts.append(f"rank {cell['rank']}")
    return ", ".join(parts)


def _heatmap(data: dict, field: str, title: str, fmt: str, colorscale: str) -> dict:
    values = [v["value"] for v in data["values"]]
    models = data["models"]
    z = [[(c or {}).get(field) for c in m["cells"]] for m in models]
    text = [["" if v is None else format(v, fmt) for v in row] for row in z]
    hover = [[_hover(c) for c in m["cells"]] for m in models]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=values,
            y=[m["display_name"] for m in models],
            text=text,
            customdata=hover,
            texttemplate="%{text}",
            colorscale=colorscale,
            hovertemplate="%{y} on %{x}: %{customdata}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title,
        xaxis_title=data["label"],
        **{
            **LAYOUT,
            "height": max(420, 60 + 34 * len(models)),
            "margin": {**LAYOUT["margin"], "l": 200},
        },
    )
    fig.update_yaxes(autorange="reversed")
    return json.loads(fig.to_json())


def _tau_chart(data: dict) -> dict:
    rows = data["test"]["values"]
    fig = go.Figure(
        go.Bar(
            x=[r["value"] for r in rows],
            y=[r["kendall_tau"] for r in rows],
            text=["" if r["kendall_tau"] is None else f"{r['kendall_tau']:.2f}" for r in rows],
            textposition="outside",
        )
    )
    fig.update_layout(
        title="Kendall's tau between each value's ranking and the overall ranking",
        yaxis_range=[-1.05, 1.15],
        yaxis_title="tau",
        **LAYOUT,
    )
    return json.loads(fig.to_json())


# ------------------------------------------------------------------------------- views


def slices(request):
    dimension = request.GET.get("dimension", DEFAULT_DIMENSION)
    if dimension not in DIMENSIONS:
        raise Http404(f"Unknown dimension {dimension!r}")
    data = slice_analysis(dimension=dimension)
    chart_list = []
    if data and data["models"]:
        chart_list = [
            (
                "slice-ratings",
                _heatmap(data, "rating", "Rating on each value's board", ".0f", "RdBu"),
            ),
            (
                "slice-win-rates",
                _heatmap(
                    data,
                    "avg_win_rate",
                    "Average win rate against the other models of each value's board",
                    ".2f",
                    "RdBu",
                ),
            ),
        ]
        if data["test"] and len(data["test"]["values"]) > 1:
            chart_list.append(("slice-tau", _tau_chart(data)))
    return render(
        request,
        "leaderboard/slices.html",
        {
            "data": data,
            "dimension": dimension,
            "dimensions": list(DIMENSIONS.items()),
            "board": selectors.board(),  # the base template's simulated-data banner
            "charts": chart_list,
        },
    )


class SlicesAPI(CachedReadView):
    @extend_schema(
        summary="Win rates by slice and whether the slice changes the ranking",
        description=(
            "Every public model's rating, interval, votes, rank and average win rate on each "
            "value's board of one dimension, with the likelihood-ratio test of one "
            "Bradley-Terry model for all values against one per value (chi-squared, df, "
            "p-value) and Kendall's tau of each value's ranking against the overall one."
        ),
        parameters=[OpenApiParameter("dimension", str, enum=list(DIMENSIONS))],
        responses={200: OpenApiTypes.OBJECT, 404: OpenApiTypes.OBJECT},
    )
    def get(self, request):
        dimension = request.query_params.get("dimension", DEFAULT_DIMENSION)
        if dimension not in DIMENSIONS:
            raise NotFound(f"Unknown dimension '{dimension}'; one of: {', '.join(DIMENSIONS)}.")
        data = slice_analysis(dimension=dimension)
        if data is None:
            raise NotFound("No leaderboard has been published yet.")
        return HttpResponse(json.dumps(data), content_type="application/json")
