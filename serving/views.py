"""`POST /create_pair` and `POST /create_edit_pair`, as the public extension calls them.

Synchronous DRF views: the provider calls run on the per-process engine loop (see
``engine``), so the view thread only waits. Errors use the project's error shape
(``core.errors``): 400 invalid, 429 throttled, 503 ``pair_unavailable`` (fewer than two
servable models), 502 ``provider_error`` / 504 ``provider_timeout`` (a side failed and no
substitute could be asked in time).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from catalogue.selectors import listed_model_keys
from core.auth import AnonymousAllowed, ApiKeyAuthentication
from core.metrics import PAIRS
from core.throttles import PAIR_THROTTLES, READ_THROTTLES
from ingest.validation import validator_for

from . import services
from .selectors import serving_state
from .serializers import CreateEditPairSerializer, CreatePairSerializer

ERRORS = {
    400: OpenApiResponse(description="Invalid input; `message` names each field and the problem."),
    413: OpenApiResponse(description="Body over the size limit."),
    429: OpenApiResponse(description="Rate limited (per IP and per userId); see Retry-After."),
    502: OpenApiResponse(
        description="`provider_error`: a model failed and no substitute could be asked."
    ),
    503: OpenApiResponse(description="`pair_unavailable`: fewer than two servable models."),
    504: OpenApiResponse(
        description="`provider_timeout`: a model timed out and no substitute answered in time."
    ),
}

_ITEM_COMMON: dict[str, Any] = {
    "userId": serializers.CharField(),
    "timestamp": serializers.IntegerField(help_text="Seconds since the epoch."),
    "prompt": serializers.CharField(),
    "model": serializers.CharField(),
    "pairIndex": serializers.IntegerField(help_text="0 = shown on top, 1 = bottom."),
    "latency": serializers.FloatField(help_text="The model's answer time in seconds."),
    "prefix": serializers.CharField(help_text="The prefix as trimmed and sent to the models."),
    "suffix": serializers.CharField(help_text="The suffix as trimmed and sent to the models."),
    "privacy": serializers.CharField(),
}
PAIR_RESPONSE = inline_serializer(
    "CompletionPair",
    {
        "pairId": serializers.CharField(),
        "completionItems": inline_serializer(
            "CompletionPairItem",
            {
                "completionId": serializers.CharField(),
                "pairCompletionId": serializers.CharField(),
                "completion": serializers.CharField(help_text="Text to insert at the cursor."),
                **_ITEM_COMMON,
            },
            many=True,
        ),
    },
)
EDIT_RESPONSE = inline_serializer(
    "EditPair",
    {
        "pairId": serializers.CharField(),
        "responseItems": inline_serializer(
            "EditPairItem",
            {
                "responseId": serializers.CharField(),
                "pairResponseId": serializers.CharField(),
                "response": serializers.CharField(help_text="The rewritten selection."),
                "language": serializers.CharField(),
                "codeToEdit": serializers.CharField(),
                "userInput": serializers.CharField(),
                **_ITEM_COMMON,
            },
            many=True,
        ),
    },
)


class _PairView(APIView):
    # API keys only: the extension sends no session cookie, and DRF's session check (which
    # loads the session and user for every request) was an eighth of the view's CPU.
    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [AnonymousAllowed]
    throttle_classes = PAIR_THROTTLES
    kind = "pair"  # the `kind` label of arena_pairs_total

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        if response.status_code < 400:
            result = "ok"
        else:
            data = response.data if isinstance(response.data, dict) else {}
            result = data.get("error") or str(response.status_code)
        PAIRS.labels(self.kind, result).inc()
        return response


class CreatePairView(_PairView):
    @extend_schema(
        request=CreatePairSerializer,
        responses={200: PAIR_RESPONSE, **ERRORS},
        summary="Extension: two completions from two models, top/bottom randomised",
    )
    def post(self, request: Request) -> Response:
        data = validator_for(CreatePairSerializer).validate(request.data)
        return Response(services.create_pair(request=CreatePairSerializer.request_from(data)))


class CreateEditPairView(_PairView):
    kind = "edit"

    @extend_schema(
        request=CreateEditPairSerializer,
        responses={200: EDIT_RESPONSE, **ERRORS},
        summary="Extension: two rewrites of the selection from two chat models",
    )
    def post(self, request: Request) -> Response:
        data = validator_for(CreateEditPairSerializer).validate(request.data)
        pair = CreateEditPairSerializer.request_from(data)
        return Response(services.create_edit_pair(request=pair))


_BOOLEAN = {"1": True, "true": True, "0": False, "false": False}


class ListModelsView(APIView):
    """`GET /list_models`: the models a pair can be drawn from, as the reference server lists
    its configured models. `?all=1` lists every key that collects votes instead (public and
    private catalogue models, served here or not: votes from other servers name them)."""

    permission_classes: list[type[BasePermission]] = []
    throttle_classes = READ_THROTTLES

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "all",
                bool,
                description="1: every public or private catalogue model, servable or not.",
            )
        ],
        responses={
            200: inline_serializer(
                "ModelList", {"models": serializers.ListField(child=serializers.CharField())}
            )
        },
        summary="Extension: the models this server can serve (enabled provider, key present)",
    )
    def get(self, request: Request) -> Response:
        everything = request.query_params.getlist("all")
        if any(v not in _BOOLEAN for v in everything) or len(everything) > 1:
            raise ValidationError({"all": "One of 1, 0, true or false."})
        if everything and _BOOLEAN[everything[0]]:
            return Response({"models": listed_model_keys()})
        return Response({"models": sorted({slot.key for slot in serving_state().slots})})
