"""Public pages: the leaderboard, a page per model, win rates by slice, and the methodology."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import redirect, render

from . import charts, compare, compare_slices, selectors
from .aggregation import DIMENSIONS
from .board_changes import recompute_pending
from .board_filters import apply_filters
from .controlled import VIEWS, controlled_rows
from .http_cache import public_read
from .ignored_board import ignored_board, ignored_rows
from .ignored_pairs import ignored_summary
from .merges import merge_target, merged_names
from .new_models import mark_new, new_models
from .page_cache import cached_per_snapshot
from .provisional import min_votes, provisional_models
from .slice_labels import category_label, value_order
from .slice_selectors import DEFAULT_DIMENSION, slice_analysis


def _category_choices() -> list[dict]:
    dims = list(DIMENSIONS)
    out = [
        {**c, "label": category_label(c["dimension"], c["value"])} for c in selectors.categories()
    ]
    # Overall first, then each dimension in its own order (context buckets by size).
    return sorted(
        out,
        key=lambda c: (
            (-1, (0, ""))
            if c["key"] == "overall"
            else (
                dims.index(c["dimension"]) if c["dimension"] in dims else len(dims),
                value_order(c["dimension"], c["value"]),
            )
        ),
    )


def _recompute_note(_request: object) -> str:
    """Part of the board's cache key: whether it says a moderation change is being applied."""
    return "recomputing" if recompute_pending() else ""


@public_read(version=_recompute_note)
@cached_per_snapshot(version=_recompute_note)
def leaderboard(request):
    category = request.GET.get("category", "overall")
    data = selectors.board(category=category)
    notice = None
    if data is None and category != "overall":
        # A stale or mistyped link: the overall board, saying so (the API still answers 404).
        notice = (
            f"There is no board for the category “{category[:100]}”: showing the overall board."
        )
        category = "overall"
        data = selectors.board(category=category)
    # ?view=controlled: the overall board controlled for position, length and latency (a
    # plain link, no JS needed). Anything else is the plain board, saying why if asked for.
    view = request.GET.get("view") or "plain"  # an empty value (a form's default) is plain
    why = None
    if view not in VIEWS:
        why = f"There is no view “{view[:40]}” (view= takes plain, controlled or ignored): showing the plain board."
    elif view == "controlled" and data is not None and category != "overall":
        why = "The controlled view exists for the overall board only: showing this category's plain board."
    elif view == "controlled" and data is not None and not data["category"].get("controlled"):
        why = "This board was computed without a controlled fit: showing the plain board."
    elif view == "ignored" and data is not None and category != "overall":
        why = "The ignored-pairs view exists for the overall board only: showing this category's plain board."
    variant = ignored_board() if view == "ignored" and why is None and data is not None else None
    if view == "ignored" and why is None and data is not None and variant is None:
        why = "This board has no counts to add ignored pairs to: showing the plain board."
    if why is not None:
        notice, view = f"{notice} {why}" if notice else why, "plain"
    context = {
        "board": data,
        "category": category,
        "categories": _category_choices(),
        "notice": notice,
        "view": view,
        "ignored_board": variant,
        "recomputing": recompute_pending(),
    }
    if data is not None:
        shown = data["models"]
        if view == "controlled":
            shown = controlled_rows(shown)
        elif view == "ignored" and variant is not None:
            shown = ignored_rows(shown, variant)
        rows, context["board_filters"] = apply_filters(rows=shown, params=request.GET)
        context["board"] = {**data, "models": mark_new(rows, new=new_models())}
        if category == "overall":
            ranked = {m["model"] for m in data["models"]}
            context["board"]["provisional"] = provisional_models(ranked=ranked)
            context["board"]["min_votes"] = min_votes()
    # ?deprecated=1: retired models in their own section (a plain link, no JS needed).
    context["show_retired"] = request.GET.get("deprecated") == "1"
    context["retired_count"] = selectors.retired_count()
    if context["show_retired"]:
        context["retired"] = selectors.retired_models(category=category)
    if data is not None and data["models"]:
        shown_data = {**data, "models": shown}
        context["charts"] = [
            ("intervals", charts.interval_chart(shown_data)),
            (
                "win-fraction",
                charts.heatmap(
                    data, "win_fraction", "Observed win fraction of model A over model B", fmt=".2f"
                ),
            ),
            (
                "battle-count",
                charts.heatmap(
                    data, "battle_count", "Battles between each pair", fmt=".0f", colorscale="Blues"
                ),
            ),
            (
                "predicted",
                charts.heatmap(
                    data,
                    "predicted_win_rate",
                    "Predicted win rate of model A over model B",
                    fmt=".2f",
                ),
            ),
            ("average", charts.average_win_rate_chart(data)),
        ]
        latency = charts.latency_chart(data) if data.get("has_latency") else None
        if latency:
            context["charts"].append(("latency", latency))
        top = charts.top_slot_chart(data["category"]["top_slot"])
        if top:
            context["charts"].append(("top-slot", top))
    return render(request, "leaderboard/board.html", context)


def model_detail(request, key: str):
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
def _model_page(request, key: str):
    model = selectors.public_model(key)
    if model is None:
        raise Http404("No public model with this key")
    data = selectors.board()
    row = next((m for m in data["models"] if m["model"] == key), None) if data else None
    history = selectors.model_history(model_id=model.pk)
    dims = list(DIMENSIONS)
    # As the category selector lists them: by dimension, context buckets by size.
    slices = sorted(
        selectors.model_slices(model_id=model.pk),
        key=lambda s: (
            dims.index(s["dimension"]) if s["dimension"] in dims else len(dims),
            value_order(s["dimension"], s["value"]),
        ),
    )
    opponents = selectors.model_opponents(board_data=data, key=key) if data else []
    ignored = ignored_summary()
    chart_list = []
    if history:
        chart_list.append(("history", charts.history_chart(history, model.display_name)))
    if opponents:
        chart_list.append(("opponents", charts.opponents_chart(opponents, model.display_name)))
    if slices:
        chart_list.append(("slices", charts.slices_chart(slices, model.display_name)))
    return render(
        request,
        "leaderboard/model.html",
        {
            "model": model,
            "merged_names": merged_names(model_id=model.pk),
            "first_rated": new_models().get(model.key),  # set only while it is new
            "ignored": ignored.model(model.key) if ignored else None,
            "row": row,
            "board": data,
            "history": history,
            "slices": slices,
            "opponents": opponents,
            "charts": chart_list,
        },
    )


@public_read
@cached_per_snapshot
def methodology(request):
    return render(request, "leaderboard/methodology.html", {"board": selectors.board()})


@public_read
@cached_per_snapshot
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
def compare_models(request):
    """Two models head to head (?a=&b=); the form works without JavaScript."""
    data = selectors.board()
    a, b = request.GET.get("a", ""), request.GET.get("b", "")
    context = {"board": data, "a": a, "b": b, "result": None, "error": None}
    status = 200
    keys = {m["model"] for m in data["models"]} if data else set()
    if a and b:
        unknown = [k for k in (a, b) if k not in keys]
        if unknown:
            context["error"] = f"Not on the current board: {', '.join(unknown)}."
            status = 404
        elif a == b:
            context["error"] = "Choose two different models to compare."
            status = 400
        else:
            context["result"] = compare.head_to_head(a=a, b=b)
            context["slices"] = compare_slices.per_slice(a=a, b=b)
    return render(request, "leaderboard/compare.html", context, status=status)
