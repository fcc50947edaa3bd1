"""Public pages: the leaderboard, a page per model, and the methodology."""

from __future__ import annotations

import hashlib
from functools import wraps

from django.core.cache import cache
from django.http import Http404, HttpResponse
from django.shortcuts import render

from . import charts, hotcache, selectors
from .aggregation import DIMENSIONS


def cached_per_snapshot(view):
    """Serve the rendered page from the cache until a new snapshot is published.

    The pages carry nothing user-specific, and everything on them comes from the published
    snapshot, so its id plus the full path identifies the HTML exactly.
    """

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if request.method != "GET":
            return view(request, *args, **kwargs)
        path = hashlib.sha256(request.get_full_path().encode()).hexdigest()[:32]
        key = f"lb:page:{selectors.published_snapshot_id()}:{path}"
        rendered = []

        def produce() -> bytes | None:
            body = cache.get(key)
            if body is None:
                response = view(request, *args, **kwargs)
                rendered.append(response)
                if response.status_code != 200:
                    return None
                body = response.content
                cache.set(key, body, selectors.BOARD_TTL)
            return body

        body = hotcache.get(key, produce)
        if body is None:
            return rendered[0]
        return HttpResponse(body)

    return wrapper


def _category_choices() -> list[dict]:
    out = []
    for c in selectors.categories():
        label = (
            "Overall"
            if c["key"] == "overall"
            else f"{DIMENSIONS.get(c['dimension'], c['dimension'])}: {c['value']}"
        )
        out.append({**c, "label": label})
    return out


@cached_per_snapshot
def leaderboard(request):
    category = request.GET.get("category", "overall")
    data = selectors.board(category=category)
    if data is None and category != "overall":
        raise Http404(f"Unknown category {category!r}")
    context = {"board": data, "category": category, "categories": _category_choices()}
    if data is not None and data["models"]:
        context["charts"] = [
            ("intervals", charts.interval_chart(data)),
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
        top = charts.top_slot_chart(data["category"]["top_slot"])
        if top:
            context["charts"].append(("top-slot", top))
    return render(request, "leaderboard/board.html", context)


@cached_per_snapshot
def model_detail(request, key: str):
    model = selectors.public_model(key)
    if model is None:
        raise Http404("No public model with this key")
    data = selectors.board()
    row = next((m for m in data["models"] if m["model"] == key), None) if data else None
    history = selectors.model_history(model_id=model.pk)
    slices = [
        {**s, "label": f"{DIMENSIONS.get(s['dimension'], s['dimension'])}: {s['value']}"}
        for s in selectors.model_slices(model_id=model.pk)
    ]
    opponents = selectors.model_opponents(board_data=data, key=key) if data else []
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
            "row": row,
            "board": data,
            "history": history,
            "slices": slices,
            "opponents": opponents,
            "charts": chart_list,
        },
    )


@cached_per_snapshot
def methodology(request):
    return render(request, "leaderboard/methodology.html", {"board": selectors.board()})
