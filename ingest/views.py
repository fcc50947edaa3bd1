"""Native v1 ingest API: one battle and a batch of battles."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.auth import AnonymousAllowed, HasApiKey, request_client
from core.client_ip import client_ip
from core.metrics import VOTES
from core.renderers import SafeJSONRenderer
from core.throttles import VOTE_THROTTLES

from .models import BattleSource
from .serializers import (
    BatchResultSerializer,
    BattleBatchSerializer,
    BattleCreatedSerializer,
    BattleSerializer,
)
from .services import BatchRejected, record_battle, record_battles
from .validation import validator_for
from .votes import VoteIn

JSON_RENDERER = SafeJSONRenderer()


ERRORS = {
    400: OpenApiResponse(description="Invalid input; `message` names each field and the problem."),
    409: OpenApiResponse(description="The pair id is already stored with a different vote."),
    413: OpenApiResponse(description="Body over the size limit."),
    429: OpenApiResponse(description="Rate limited; see Retry-After."),
}


class VoteView(APIView):
    """Base of every vote route: anonymous allowed (by setting), vote throttles, JSON out.

    Routes that take battles set `vote_route` (the `route` label of arena_votes_total) and
    `self.votes` to {"stored": n, "duplicate": m} once stored; an error answer counts its
    `self.votes_in` votes under "rejected_<error code>" (throttled, invalid, conflict, ...).
    """

    permission_classes = [AnonymousAllowed]
    throttle_classes = VOTE_THROTTLES
    vote_route: str | None = None

    def perform_content_negotiation(
        self, request: Request, force: bool = False
    ) -> tuple[BaseRenderer, str]:
        # Votes always answer JSON; parsing Accept was a noticeable part of a vote's CPU.
        return (JSON_RENDERER, "application/json")

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        finished = super().finalize_response(request, response, *args, **kwargs)
        if self.vote_route is not None:
            if finished.status_code < 400:
                for result, n in getattr(self, "votes", {}).items():
                    if n:
                        VOTES.labels(self.vote_route, result).inc(n)
            else:
                data = finished.data if isinstance(finished.data, dict) else {}
                reason = data.get("error") or str(finished.status_code)
                VOTES.labels(self.vote_route, f"rejected_{reason}").inc(
                    getattr(self, "votes_in", 1)
                )
        return finished


class BattleView(VoteView):
    vote_route = "battles"

    @extend_schema(
        request=BattleSerializer,
        responses={201: BattleCreatedSerializer, 200: BattleCreatedSerializer, **ERRORS},
        summary="Post one battle (vote)",
        description="Idempotent on `pair_id`: a replay of the same vote answers 200 and stores "
        "nothing; the same `pair_id` with a different vote answers 409.",
    )
    def post(self, request: Request) -> Response:
        data = validator_for(BattleSerializer).validate(request.data)
        result = record_battle(
            vote=BattleSerializer.vote_from(data, source=BattleSource.API),
            client=request_client(request),
            ip=client_ip(request),
        )
        self.votes = {"stored": 1} if result.created else {"duplicate": 1}
        return Response(
            {
                "status": "created" if result.created else "duplicate",
                "pair_id": data["pair_id"],
                "battle_id": result.battle_id,
            },
            status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
        )


class BattleBatchView(VoteView):
    permission_classes = [HasApiKey]
    vote_route = "battles_batch"

    @extend_schema(
        request=BattleBatchSerializer,
        responses={201: BatchResultSerializer, **ERRORS},
        summary="Post up to ARENA_MAX_BATCH battles at once (API key required)",
        description="All-or-nothing: any invalid item rejects the whole batch with per-item "
        "errors under `fields` (e.g. `battles.3.model_a`). Replays are skipped and counted.",
    )
    def post(self, request: Request) -> Response:
        data = request.data
        items = data.get("battles") if isinstance(data, dict) else None
        if not isinstance(items, list) or not items:
            raise serializers.ValidationError(
                {"battles": ["Must be a non-empty list of battle objects."]}
            )
        self.votes_in = len(items)
        if len(items) > settings.ARENA_MAX_BATCH:
            raise serializers.ValidationError(
                {
                    "battles": [
                        f"At most {settings.ARENA_MAX_BATCH} battles per batch, got {len(items)}."
                    ]
                }
            )
        votes: list[VoteIn] = []
        errors: dict[int, dict[str, Any]] = {}
        validator = validator_for(BattleSerializer)
        for i, item in enumerate(items):
            valid, item_errors = validator.errors_or_data(item)
            if valid is not None:
                votes.append(BattleSerializer.vote_from(valid, source=BattleSource.API))
            elif item_errors is not None:
                errors[i] = item_errors
        if errors:
            raise BatchRejected(errors, conflict=False)
        result = record_battles(votes=votes, client=request_client(request), ip=client_ip(request))
        self.votes = {"stored": result.created, "duplicate": result.duplicates}
        return Response(
            {"created": result.created, "duplicates": result.duplicates},
            status=status.HTTP_201_CREATED,
        )
