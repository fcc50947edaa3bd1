"""Read API: the published board of a category as JSON or CSV, the categories, win rates by slice.

Responses are built from the published snapshot and cached per snapshot id, so they go
stale exactly when a new snapshot is published, and no request touches the battles.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence

from django.core.cache import cache
from django.http import HttpResponse
from django.utils.decorators import method_decorator
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import BasePermission
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from core import hotcache
from core.csv_cells import safe_dict
from core.renderers import SafeJSONRenderer
from core.throttles import READ_THROTTLES

from . import selectors
from .aggregation import DIMENSIONS
from .http_cache import public_read
from .page_selectors import api_board_rows
from .slice_selectors import DEFAULT_DIMENSION, slice_analysis

CSV_FIELDS = (
    "rank",
    "model",
    "display_name",
    "rating",
    "ci_lower",
    "ci_upper",
    "bootstrap_median",
    "votes",
    "avg_win_rate",
    "rank_change",
    "rank_change_clear",
    "organization",
    "license",
    "position_adjusted_rating",
    "controlled_rating",
    "controlled_ci_lower",
    "controlled_ci_upper",
    "controlled_rank",
    "plain_rating",
    "plain_rank",
)


def _board_csv(rows: Sequence[Mapping[str, object]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(safe_dict(row))
    return out.getvalue()


def _render(key: str, sid: int, category: str, fmt: str, view: str = "plain") -> str | None:
    body: str | None = cache.get(key)
    if body is None:
        data = selectors.board(category=category, snapshot_id=sid)
        if data is None:
            return None
        snapshot: Mapping[str, object] = data["snapshot"]
        models: Sequence[Mapping[str, object]] = data["models"]
        if category == "overall":
            extended = api_board_rows(data=data, snapshot_id=sid, view=view)
            if extended is None:
                return None
            snapshot, models = extended
        if fmt == "csv":
            body = _board_csv(models)
        else:
            body = json.dumps(
                {"snapshot": snapshot, "category": data["category"], "models": models}
            )
        cache.set(key, body, selectors.BOARD_TTL)
    return body


class CachedReadView(APIView):
    """A public read: no auth, the read throttle, bodies pre-rendered as JSON or CSV.

    Each `get` carries `method_decorator(public_read)`: ETag, Last-Modified, Cache-Control
    and 304 answers (http_cache.py), after the throttle.
    """

    authentication_classes: list[type[BaseAuthentication]] = []
    permission_classes: list[type[BasePermission]] = []
    throttle_classes = READ_THROTTLES

    def perform_content_negotiation(
        self, request: Request, force: bool = False
    ) -> tuple[BaseRenderer, str]:
        # Bodies are pre-rendered and cached; `?format=csv` is ours, not DRF's renderer switch.
        return (SafeJSONRenderer(), "application/json")


class LeaderboardAPI(CachedReadView):
    @extend_schema(
        summary="The published leaderboard of a category",
        parameters=[
            OpenApiParameter(
                "category", str, description="A key from /api/v1/categories (default: overall)."
            ),
            OpenApiParameter("format", str, enum=["json", "csv"], description="Default json."),
            OpenApiParameter(
                "view",
                str,
                enum=["plain", "ignored"],
                description="ignored (overall only): pairs shown and not voted on count as "
                "both bad; rating, interval and rank are that variant's, plain_rating and "
                "plain_rank the plain board's. Default plain.",
            ),
        ],
        responses={
            (200, "application/json"): OpenApiTypes.OBJECT,
            (200, "text/csv"): OpenApiResponse(
                OpenApiTypes.STR, description="With format=csv: one row per model."
            ),
            404: OpenApiResponse(description="No board published yet, or unknown category."),
        },
    )
    @method_decorator(public_read)
    def get(self, request: Request) -> HttpResponse:
        category = request.query_params.get("category", "overall")
        fmt = request.query_params.get("format", "json")
        view = request.query_params.get("view", "plain")
        if fmt not in ("json", "csv"):
            raise NotFound(f"format '{fmt}' is not offered: use json or csv.")
        if view not in ("plain", "ignored"):
            raise ValidationError({"view": [f"'{view[:40]}' is not a view: use plain or ignored."]})
        if view == "ignored" and category != "overall":
            raise ValidationError({"view": ["view=ignored exists for the overall board only."]})
        sid = selectors.published_snapshot_id()
        if sid is None:
            raise NotFound("No leaderboard has been published yet.")
        key = f"lb:response:{sid}:{fmt}:{category}:{view}"
        body = hotcache.get(key, lambda: _render(key, sid, category, fmt, view))
        if body is None and view == "ignored" and category == "overall":
            raise NotFound("This board has no counts to add ignored pairs to.")
        if body is None:
            raise NotFound(f"Unknown category '{category}'; see /api/v1/categories.")
        if fmt == "csv":
            response = HttpResponse(body, content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = (
                f'attachment; filename="leaderboard-{category.replace(":", "-")}.csv"'
            )
            return response
        return HttpResponse(body, content_type="application/json")


class CategoriesAPI(CachedReadView):
    @extend_schema(
        summary="The slices of the published board", responses={200: OpenApiTypes.OBJECT}
    )
    @method_decorator(public_read)
    def get(self, request: Request) -> HttpResponse:
        sid = selectors.published_snapshot_id()
        key = f"lb:response:{sid}:categories"
        body: str | None = cache.get(key)
        if body is None:
            body = json.dumps(
                {
                    "snapshot_id": sid,
                    "categories": selectors.categories(snapshot_id=sid) if sid else [],
                }
            )
            cache.set(key, body, selectors.BOARD_TTL)
        return HttpResponse(body, content_type="application/json")


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
    @method_decorator(public_read)
    def get(self, request: Request) -> HttpResponse:
        dimension = request.query_params.get("dimension", DEFAULT_DIMENSION)
        if dimension not in DIMENSIONS:
            raise NotFound(f"Unknown dimension '{dimension}'; one of: {', '.join(DIMENSIONS)}.")
        sid = selectors.published_snapshot_id()
        if sid is None:
            raise NotFound("No leaderboard has been published yet.")
        body = hotcache.get(
            f"lb:response:{sid}:slices:{dimension}",
            lambda: json.dumps(slice_analysis(dimension=dimension, snapshot_id=sid)),
        )
        return HttpResponse(body, content_type="application/json")
