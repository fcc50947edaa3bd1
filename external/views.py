"""Public pages: correlations with external leaderboards, and the external score catalogue."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import render

from leaderboard import selectors as lb_selectors

from . import charts, selectors


def correlations(request):
    data = selectors.correlations()
    chosen = request.GET.get("slice", "overall")
    context: dict = {
        "data": data,
        "board": lb_selectors.board(),  # the base template's simulated-data banner
        "slice": chosen,
    }
    if data is not None:
        if chosen not in data["slices"]:
            raise Http404(f"No correlations for slice {chosen!r}")
        results = [r for r in data["results"] if r["slice"] == chosen]
        by_source: dict[str, list[dict]] = {}
        for r in results:
            by_source.setdefault(r["source_name"], []).append(r)
        # Board x slice summary of Spearman values, one row per board.
        summary: dict[int, dict] = {}
        for r in data["results"]:
            row = summary.setdefault(r["board_id"], {"board": r["board"], "cells": {}})
            row["cells"][r["slice"]] = r
        context.update(
            {
                "results": results,
                "slices": [{"key": k, "label": selectors.slice_label(k)} for k in data["slices"]],
                "summary": [
                    {"board": row["board"], "cells": [row["cells"].get(k) for k in data["slices"]]}
                    for row in summary.values()
                ],
                "charts": [
                    (f"scatter-{i}", charts.scatter(rs, name))
                    for i, (name, rs) in enumerate(by_source.items())
                    if any(r["n"] for r in rs)
                ],
            }
        )
        arena = [r for r in data["results"] if r["source"] == "chatbot_arena" and r["n"] >= 3]
        if arena:
            first_board = arena[0]["board_id"]
            context["charts"].append(
                (
                    "arena-by-slice",
                    charts.slice_bars([r for r in arena if r["board_id"] == first_board]),
                )
            )
    return render(request, "external/correlations.html", context)


def external_scores(request):
    data = selectors.external_catalogue()
    return render(request, "external/scores.html", {**data, "charts": []})
