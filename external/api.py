"""Read API: `GET /api/v1/correlations`, the stored correlations of the published snapshot."""

from __future__ import annotations

import json

from django.http import HttpResponse
from django.utils.decorators import method_decorator
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.request import Request

from leaderboard import selectors as lb_selectors
from leaderboard.api import CachedReadView
from leaderboard.http_cache import public_read

from . import selectors


class CorrelationsAPI(CachedReadView):
    @extend_schema(
        summary="Correlations of the arena's ratings with external leaderboards",
        description=(
            "Spearman and Pearson between the published board's ratings (overall and each "
            "task-type slice) and every external score, over the models both cover, with n, "
            "the p-value and a 95% Fisher-z interval (`interval` names the method). `pending` is true while the "
            "newest snapshot's correlations are still being computed (an earlier snapshot's are "
            "returned meanwhile)."
        ),
        parameters=[
            OpenApiParameter("slice", str, description="e.g. overall or task_type:backend"),
            OpenApiParameter("source", str, description="e.g. chatbot_arena or livebench"),
        ],
        responses={200: OpenApiTypes.OBJECT, 404: OpenApiTypes.OBJECT},
    )
    @method_decorator(
        public_read(
            version=lambda _r: selectors.correlations_version(),
            modified=lambda _r: selectors.correlations_computed_at(),
        )
    )
    def get(self, request: Request) -> HttpResponse:
        slice_key = request.query_params.get("slice") or None
        source = request.query_params.get("source") or None
        sid = lb_selectors.published_snapshot_id()
        if sid is None:
            raise NotFound("No leaderboard has been published yet.")
        # selectors.correlations() is cached per snapshot; filtering it is cheap.
        data = selectors.correlations()
        if data is None:
            raise NotFound(
                "No correlations yet: import external scores (import_external_scores) and "
                "wait for the next recompute."
            )
        if slice_key is not None and slice_key not in data["slices"]:
            raise NotFound(f"Unknown slice '{slice_key}'; one of: {', '.join(data['slices'])}.")
        results = [
            r
            for r in data["results"]
            if (slice_key is None or r["slice"] == slice_key)
            and (source is None or r["source"] == source)
        ]
        if source is not None and not results:
            raise NotFound(f"No correlations with source '{source}'.")
        body = json.dumps({**data, "results": results})
        return HttpResponse(body, content_type="application/json")
