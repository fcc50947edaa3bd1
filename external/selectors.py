"""Reads of the external app: stored correlations and the external score catalogue.

Both are cached per published snapshot id (like the boards), so they go stale exactly
when a new snapshot or new correlations are stored.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.cache import cache

from analysis.correlation import INTERVAL
from catalogue.models import ArenaModel, Visibility
from leaderboard import selectors as lb_selectors
from leaderboard.slice_labels import category_label

from .models import CorrelationResult, ExternalAlias, ExternalBoard, ExternalScore, Match
from .services import CACHE_PREFIX
from .sources import PUBLISHED_REFERENCE, SOURCES


def slice_label(key: str) -> str:
    """The shown name of a board key (`language:csharp` -> `Programming language: C#`)."""
    if key == "overall":
        return "Overall"
    dimension, _, value = key.partition(":")
    return category_label(dimension, value)


def _estimate(
    value: float | None, lower: float | None, upper: float | None, p: float | None
) -> dict[str, Any]:
    return {"value": value, "ci_lower": lower, "ci_upper": upper, "p_value": p}


def _caveats() -> dict[tuple[int, str], str]:
    return {
        (s, n): note
        for s, n, note in ExternalAlias.objects.filter(caveat=True).values_list(
            "source_id", "name", "note"
        )
    }


def _build(sid: int) -> dict[str, Any] | None:
    rows = list(
        CorrelationResult.objects.filter(snapshot_id=sid)
        .select_related("board__source")
        .order_by("slice_key", "board__source__name", "board__metric", "board__release")
    )
    if not rows:
        return None
    caveats = _caveats()
    results = []
    for r in rows:
        source = r.board.source
        notes = [
            {"name": p["name"], "model": p["model"], "note": caveats[(source.pk, p["name"])]}
            for p in r.points
            if (source.pk, p["name"]) in caveats
        ]
        info = SOURCES.get(source.key)
        results.append(
            {
                "slice": r.slice_key,
                "slice_label": slice_label(r.slice_key),
                "source": source.key,
                "source_name": source.name,
                "kind": source.kind,
                "board_id": r.board_id,
                "board": r.board.label,
                "metric": r.board.metric,
                "release": r.board.release,
                "n": r.n,
                "spearman": _estimate(r.spearman, r.spearman_lower, r.spearman_upper, r.spearman_p),
                "pearson": _estimate(r.pearson, r.pearson_lower, r.pearson_upper, r.pearson_p),
                "interval": {"spearman": INTERVAL["spearman"], "pearson": INTERVAL["pearson"]},
                "published_spearman": info.published if info else "",
                "caveats": notes,
                "models": r.points,
            }
        )
    overall = lb_selectors.board(category="overall", snapshot_id=sid)
    return {
        "snapshot": overall["snapshot"] if overall else {"id": sid},
        "computed_at": max(r.computed_at for r in rows).isoformat(),
        "slices": sorted({r.slice_key for r in rows}, key=lambda k: (k != "overall", k)),
        "results": results,
        "reference": PUBLISHED_REFERENCE,
    }


def correlations(*, snapshot_id: int | None = None) -> dict[str, Any] | None:
    """Correlations of the published snapshot (or the newest earlier one while pending).

    Returns None when no snapshot has any. ``pending`` is true when the published snapshot's
    own correlations are not computed yet and an earlier snapshot's are shown instead.
    """
    sid = snapshot_id or lb_selectors.published_snapshot_id()
    if sid is None:
        return None
    key = f"{CACHE_PREFIX}:{sid}"
    data: dict[str, Any] | None = cache.get(key)
    if data is not None:
        return data
    data = _build(sid)
    if data is not None:
        data = {**data, "pending": False}
        cache.set(key, data, lb_selectors.BOARD_TTL)
        return data
    if snapshot_id is not None:
        return None
    # The task for the new snapshot has not run yet: show the previous results, flagged.
    older = (
        CorrelationResult.objects.filter(snapshot_id__lt=sid)
        .order_by("-snapshot_id")
        .values_list("snapshot_id", flat=True)
        .first()
    )
    data = _build(older) if older else None
    return {**data, "pending": True} if data else None


def correlations_version() -> str:
    """Changes whenever the correlations shown would change (new snapshot or new results)."""
    data = correlations()
    if data is None:
        return "none"
    return f"{data['snapshot']['id']}:{data['computed_at']}:{data['pending']}"


def correlations_computed_at() -> dt.datetime | None:
    """When the correlations shown were computed (None when there are none)."""
    data = correlations()
    return dt.datetime.fromisoformat(data["computed_at"]) if data is not None else None


def correlations_page(*, chosen: str) -> dict[str, Any] | None:
    """What the correlations page shows for one slice; None when the slice has none.

    Human-preference leaderboards come first, then the static benchmarks; caveated name
    matches become numbered footnotes instead of being repeated on every row.
    """
    data = correlations()
    if data is None:
        return {"data": None}
    if chosen not in data["slices"]:
        return None
    results = sorted(
        (r for r in data["results"] if r["slice"] == chosen),
        key=lambda r: (r["kind"] != "preference", r["source_name"], r["board"]),
    )
    # One footnote per (model, note), listing every spelling it covers.
    spellings: dict[tuple[str, str], list[str]] = {}
    for r in results:
        for c in r["caveats"]:
            names = spellings.setdefault((c["model"], c["note"]), [])
            if c["name"] not in names:
                names.append(c["name"])
    keys = list(spellings)
    results = [
        {
            **r,
            "marks": ",".join(str(keys.index((c["model"], c["note"])) + 1) for c in r["caveats"]),
        }
        for r in results
    ]
    by_source: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_source.setdefault(r["source_name"], []).append(r)
    # Board x slice summary of Spearman values, one row per board.
    summary: dict[int, dict[str, Any]] = {}
    for r in data["results"]:
        row = summary.setdefault(r["board_id"], {"board": r["board"], "cells": {}})
        row["cells"][r["slice"]] = r
    arena = [r for r in data["results"] if r["source"] == "chatbot_arena" and r["n"] >= 3]
    return {
        "data": data,
        "results": results,
        "notes": [f"{', '.join(spellings[k])} → {k[0]}: {k[1]}" for k in keys],
        "slices": [{"key": k, "label": slice_label(k)} for k in data["slices"]],
        "summary": [
            {"board": row["board"], "cells": [row["cells"].get(k) for k in data["slices"]]}
            for row in summary.values()
        ],
        "by_source": by_source,
        # Chatbot Arena's first board across the slices (the seed's comparison).
        "arena_by_slice": [r for r in arena if r["board_id"] == arena[0]["board_id"]]
        if arena
        else [],
    }


def external_catalogue() -> dict[str, Any]:
    """Every board with its match counts, and the public models' scores on each board."""
    boards = list(
        ExternalBoard.objects.select_related("source").order_by("source__name", "metric", "release")
    )
    counts: dict[int, dict[str, int]] = {
        b.pk: {"scores": 0, "matched": 0, "ignored": 0} for b in boards
    }
    for board_id, match in ExternalScore.objects.values_list("board_id", "match"):
        c = counts[board_id]
        c["scores"] += 1
        c["matched"] += match in (Match.ALIAS, Match.KEY)
        c["ignored"] += match == Match.IGNORED
    values: dict[tuple[int, int | None], tuple[float, str]] = {}
    for board_id, model_id, value, name in ExternalScore.objects.filter(
        model__visibility=Visibility.PUBLIC
    ).values_list("board_id", "model_id", "value", "name"):
        values.setdefault((board_id, model_id), (value, name))
    overall = lb_selectors.board(category="overall")
    shown = overall["models"] if overall else []
    ids: dict[str, int] = dict(
        ArenaModel.objects.filter(key__in=[m["model"] for m in shown]).values_list("key", "id")
    )
    rows = []
    for m in shown:
        shown_id = ids.get(m["model"])
        rows.append(
            {
                "model": m["model"],
                "display_name": m["display_name"],
                "rating": m["rating"],
                "scores": [values.get((b.pk, shown_id)) for b in boards],
            }
        )
    return {
        "boards": [
            {
                "id": b.pk,
                "label": b.label,
                "source": b.source.name,
                "kind": b.source.get_kind_display(),
                "metric": b.metric,
                "release": b.release,
                "active": b.active,
                "file_name": b.file_name,
                "imported_at": b.imported_at,
                **counts[b.pk],
                "unmatched": counts[b.pk]["scores"]
                - counts[b.pk]["matched"]
                - counts[b.pk]["ignored"],
            }
            for b in boards
        ],
        "rows": rows,
        "board": overall,
    }
