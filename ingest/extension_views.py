"""The public Copilot Arena extension's routes, so that extension can post here unchanged.

Routes and field names follow the extension (see docs/api.md). Each answers
`{"status": "success"}` (the extension only checks for a 2xx); replays are accepted. A vote
held out of the board (ingest/binding.py: not a pair this server served) says so in `held`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.auth import request_client
from core.client_ip import client_ip
from core.throttles import COMPLETION_LOG_THROTTLES, READ_THROTTLES

from . import selectors
from .completions import record_completion, record_single_outcome
from .extension_serializers import (
    AddCompletionSerializer,
    CompletionOutcomeSerializer,
    EditOutcomeSerializer,
    SingleOutcomeSerializer,
    UserIdSerializer,
)
from .pseudonyms import pseudonymise_user
from .services import record_battle
from .validation import validator_for
from .views import ERRORS, VoteView
from .votes import CompletionIn

SUCCESS = inline_serializer("ExtensionSuccess", {"status": serializers.CharField()})
_F = TypeVar("_F", bound=Callable[..., Any])


def _extension_put(request: type[serializers.Serializer[Any]], summary: str) -> Callable[[_F], _F]:
    """The schema of an extension route: its body, and the extension's success or our errors."""
    return extend_schema(request=request, responses={200: SUCCESS, **ERRORS}, summary=summary)


class _OutcomeView(VoteView):
    serializer_class: type[CompletionOutcomeSerializer | EditOutcomeSerializer]

    def put(self, request: Request) -> Response:
        data = validator_for(self.serializer_class).validate(request.data)
        result = record_battle(
            vote=self.serializer_class.vote_from(data),
            client=request_client(request),
            ip=client_ip(request),
        )
        self.votes = {"stored": 1} if result.created else {"duplicate": 1}
        body: dict[str, object] = {"status": "success", "created": result.created}
        if result.hold:
            body["held"] = result.hold
        return Response(body)


@_extension_put(CompletionOutcomeSerializer, "Extension: a completion battle's vote")
class CompletionOutcomeView(_OutcomeView):
    serializer_class = CompletionOutcomeSerializer
    vote_route = "add_completion_outcome"


@_extension_put(EditOutcomeSerializer, "Extension: an edit battle's vote")
class EditOutcomeView(_OutcomeView):
    serializer_class = EditOutcomeSerializer
    vote_route = "add_edit_outcome"


class AddCompletionView(VoteView):
    throttle_classes = COMPLETION_LOG_THROTTLES

    @_extension_put(AddCompletionSerializer, "Extension: a completion was shown")
    def put(self, request: Request) -> Response:
        data = validator_for(AddCompletionSerializer).validate(request.data)
        created = record_completion(completion=AddCompletionSerializer.completion_from(data))
        return Response({"status": "success", "created": created})


class SingleOutcomeView(VoteView):
    @_extension_put(SingleOutcomeSerializer, "Extension: the only completion shown was accepted")
    def put(self, request: Request) -> Response:
        d = validator_for(SingleOutcomeSerializer).validate(request.data)
        created = record_single_outcome(
            completion=CompletionIn(
                completion_id=d["completionId"],
                model_id=d["model"].id,
                user_id=d["userId"],
                privacy=d["privacy"],
                client_version=d["version"],
                prompt=d["prompt"],
                completion=d["completion"],
            )
        )
        return Response({"status": "success", "created": created})


class UserVoteCountView(APIView):
    permission_classes: list[type[BasePermission]] = []
    throttle_classes = READ_THROTTLES

    @extend_schema(
        request=UserIdSerializer,
        responses={
            200: inline_serializer("VoteCount", {"voteCount": serializers.IntegerField()}),
            **ERRORS,
        },
        summary="Extension: how many votes this user has cast",
    )
    def post(self, request: Request) -> Response:
        serializer = UserIdSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user_hash = pseudonymise_user(serializer.validated_data["userId"])
        return Response({"voteCount": selectors.user_vote_count(user_hash=user_hash)})
