"""Public pages: correlations with external leaderboards, and the external score catalogue."""

from __future__ import annotations

from datetime import datetime

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from leaderboard import selectors as lb_selectors
from leaderboard.http_cache import public_read
from leaderboard.page_cache import cached_per_snapshot

from . import charts, selectors


def _correlations_version(_request: HttpRequest) -> str:
    return selectors.correlations_version()


def _correlations_modified(_request: HttpRequest) -> datetime | None:
    return selectors.correlations_computed_at()


@public_read(version=_correlations_version, modified=_correlations_modified)
@cached_per_snapshot(version=_correlations_version)
def correlations(request: HttpRequest) -> HttpResponse:
    chosen = request.GET.get("slice", "overall")
    page = selectors.correlations_page(chosen=chosen)
    if page is None:
        raise Http404(f"No correlations for slice {chosen!r}")
    context = {
        **page,
        "board": lb_selectors.board(),  # the base template's simulated-data banner
        "slice": chosen,
    }
    if page["data"] is not None:
        context["charts"] = [
            (f"scatter-{i}", charts.scatter(rs, name))
            for i, (name, rs) in enumerate(page["by_source"].items())
            if any(r["n"] for r in rs)
        ]
        if page["arena_by_slice"]:
            context["charts"].append(("arena-by-slice", charts.slice_bars(page["arena_by_slice"])))
    return render(request, "external/correlations.html", context)


def external_scores(request: HttpRequest) -> HttpResponse:
    data = selectors.external_catalogue()
    return render(request, "external/scores.html", {**data, "charts": []})
