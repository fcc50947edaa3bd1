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
        # Human-preference leaderboards first, then the static benchmarks.
        results = sorted(
            (r for r in data["results"] if r["slice"] == chosen),
            key=lambda r: (r["kind"] != "preference", r["source_name"], r["board"]),
        )
        # Caveated matches as numbered footnotes instead of repeating them on every row.
        # One footnote per (model, note), listing every spelling it covers.
        spellings: dict[tuple[str, str], list[str]] = {}
        for r in results:
            for c in r["caveats"]:
                names = spellings.setdefault((c["model"], c["note"]), [])
                if c["name"] not in names:
                    names.append(c["name"])
        keys = list(spellings)
        notes = [f"{', '.join(spellings[k])} → {k[0]}: {k[1]}" for k in keys]
        results = [
            {
                **r,
                "marks": ",".join(
                    str(keys.index((c["model"], c["note"])) + 1) for c in r["caveats"]
                ),
            }
            for r in results
        ]
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
                "notes": notes,
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
