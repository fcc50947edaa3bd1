"""Public pages: the leaderboard, a page per model, win rates by slice, and the methodology."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render

from . import charts, selectors
from .aggregation import DIMENSIONS
from .board_changes import recompute_pending
from .http_cache import public_read
from .merges import merge_target
from .page_cache import cached_per_snapshot
from .page_selectors import board_rows, category_choices, choose_board, compare_page, model_page
from .slice_selectors import DEFAULT_DIMENSION, slice_analysis

Chart = tuple[str, dict[str, Any]]  # (element id, the Plotly figure as JSON)


def _recompute_note(_request: object) -> str:
    """Part of the board's cache key: whether it says a moderation change is being applied."""
    return "recomputing" if recompute_pending() else ""


def _board_charts(data: selectors.Board, shown: Mapping[str, object]) -> list[Chart]:
    """The board page's charts; `shown` is the board with the view's rows (intervals)."""
    plain = {**data}  # charts.heatmap takes a plain dict
    out: list[Chart] = [
        ("intervals", charts.interval_chart(shown)),
        (
            "win-fraction",
            charts.heatmap(
                plain, "win_fraction", "Observed win fraction of model A over model B", fmt=".2f"
            ),
        ),
        (
            "battle-count",
            charts.heatmap(
                plain, "battle_count", "Battles between each pair", fmt=".0f", colorscale="Blues"
            ),
        ),
        (
            "predicted",
            charts.heatmap(
                plain,
                "predicted_win_rate",
                "Predicted win rate of model A over model B",
                fmt=".2f",
            ),
        ),
        ("average", charts.average_win_rate_chart(data)),
    ]
    latency = charts.latency_chart(data) if data.get("has_latency") else None
    if latency:
        out.append(("latency", latency))
    top = charts.top_slot_chart(data["category"]["top_slot"])
    if top:
        out.append(("top-slot", top))
    return out


@public_read(version=_recompute_note)
@cached_per_snapshot(version=_recompute_note)
def leaderboard(request: HttpRequest) -> HttpResponse:
    # ?view=controlled: the overall board controlled for position, length and latency (a
    # plain link, no JS needed). Anything else is the plain board, saying why if asked for.
    choice = choose_board(
        category=request.GET.get("category", "overall"),
        # an empty value (a form's default) is plain
        view=request.GET.get("view") or "plain",
    )
    data = choice.data
    rows = None if data is None else board_rows(data=data, choice=choice, params=request.GET)
    context: dict[str, object] = {
        "board": data,
        "category": choice.category,
        "categories": category_choices(),
        "notice": choice.notice,
        "view": choice.view,
        "ignored_board": choice.variant,
        "recomputing": recompute_pending(),
    }
    if rows is not None:
        context["board_filters"], context["board"] = rows.filters, rows.board
    # ?deprecated=1: retired models in their own section (a plain link, no JS needed).
    context["show_retired"] = request.GET.get("deprecated") == "1"
    context["retired_count"] = selectors.retired_count()
    if context["show_retired"]:
        context["retired"] = selectors.retired_models(category=choice.category)
    if data is not None and rows is not None and data["models"]:
        context["charts"] = _board_charts(data, {**data, "models": rows.shown})
    return render(request, "leaderboard/board.html", context)


def model_detail(request: HttpRequest, key: str) -> HttpResponseBase:
    target = merge_target(key)
    if target is not None:
        return redirect("model-detail", key=target, permanent=True)
    # Checked before any cache: a model hidden a moment ago has no page, whatever the
    # published snapshot (which still lists it until the recompute) and the page cache say.
    if selectors.public_model(key) is None:
        raise Http404("No public model with this key")
    return _model_page(request, key)


@public_read
@cached_per_snapshot
def _model_page(request: HttpRequest, key: str) -> HttpResponse:
    model = selectors.public_model(key)
    if model is None:
        raise Http404("No public model with this key")
    page = model_page(model=model)
    chart_list: list[Chart] = []
    if page.history:
        chart_list.append(("history", charts.history_chart(page.history, model.display_name)))
    if page.opponents:
        chart_list.append(("opponents", charts.opponents_chart(page.opponents, model.display_name)))
    if page.slices:
        chart_list.append(("slices", charts.slices_chart(page.slices, model.display_name)))
    return render(request, "leaderboard/model.html", {**page.context(), "charts": chart_list})


@public_read
@cached_per_snapshot
def methodology(request: HttpRequest) -> HttpResponse:
    return render(request, "leaderboard/methodology.html", {"board": selectors.board()})


@public_read
@cached_per_snapshot
def slices(request: HttpRequest) -> HttpResponse:
    dimension = request.GET.get("dimension", DEFAULT_DIMENSION)
    if dimension not in DIMENSIONS:
        raise Http404(f"Unknown dimension {dimension!r}")
    data = slice_analysis(dimension=dimension)
    chart_list: list[Chart] = []
    if data and data["models"]:
        chart_list = [
            (
                "slice-ratings",
                charts.slice_heatmap(data, "rating", "Rating on each value's board", ".0f", "RdBu"),
            ),
            (
                "slice-win-rates",
                charts.slice_heatmap(
                    data,
                    "avg_win_rate",
                    "Average win rate against the other models of each value's board",
                    ".2f",
                    "RdBu",
                ),
            ),
        ]
        if data["test"] and len(data["test"]["values"]) > 1:
            chart_list.append(("slice-tau", charts.slice_tau_chart(data)))
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


@cached_per_snapshot
@public_read
def compare_models(request: HttpRequest) -> HttpResponse:
    """Two models head to head (?a=&b=); the form works without JavaScript."""
    context, status = compare_page(a=request.GET.get("a", ""), b=request.GET.get("b", ""))
    return render(request, "leaderboard/compare.html", context, status=status)
