"""The extension's account and personal-statistics routes, the contributor pages and "take part"."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import cache_control
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.throttles import ACCOUNT_THROTTLES, READ_THROTTLES
from ingest.extension_serializers import UserIdSerializer
from ingest.pseudonyms import pseudonymise_user
from leaderboard import selectors as lb_selectors
from leaderboard.provisional import min_votes

from . import charts, selectors, services
from .models import Contributor
from .serializers import AuthenticateSerializer, RegisterSerializer, UpdateUserSerializer

SCORE_HISTORY_SCHEMA = {
    "type": "array",
    "items": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "model": {"type": "string"},
                "elo": {"type": "number"},
                "votes": {"type": "integer"},
            },
            "required": ["model", "elo", "votes"],
        },
    },
}

SCORE = inline_serializer(
    "ModelScore",
    {
        "model": serializers.CharField(),
        "elo": serializers.FloatField(),
        "votes": serializers.IntegerField(),
    },
)
ERRORS = {
    400: OpenApiResponse(description="Invalid input; `message` names each field and the problem."),
    401: OpenApiResponse(description="No such user, or the account's password does not match."),
    429: OpenApiResponse(description="Rate limited; see Retry-After."),
}


class _AccountView(APIView):
    authentication_classes: list[type[BaseAuthentication]] = []
    permission_classes: list[type[BasePermission]] = []
    throttle_classes = ACCOUNT_THROTTLES


def _validated(serializer_class: type[serializers.Serializer[Any]], request: Request) -> Any:
    """The request's body through `serializer_class`; a 400 naming the fields otherwise."""
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class UsersView(_AccountView):
    @extend_schema(
        request=RegisterSerializer,
        responses={200: dict, 409: OpenApiResponse(description="The username is taken."), **ERRORS},
        summary="Extension: register (or rename) this machine's user",
    )
    def put(self, request: Request) -> Response:
        d = _validated(RegisterSerializer, request)
        contributor = services.register(
            user_id=d["userId"],
            username=d["username"],
            password=d.get("password"),
            metadata=d.get("metadata"),
        )
        return Response({"message": "User saved", "username": contributor.username})

    @extend_schema(
        request=UpdateUserSerializer,
        responses={
            200: dict,
            404: OpenApiResponse(description="No user has this username."),
            **ERRORS,
        },
        summary="Extension: change the password or the metadata of an account",
    )
    def patch(self, request: Request) -> Response:
        d = _validated(UpdateUserSerializer, request)
        services.update_account(
            user_id=d["userId"],
            username=d["username"],
            old_password=d.get("oldPassword"),
            new_password=d.get("newPassword"),
            metadata=d.get("metadata"),
        )
        return Response({"message": "User updated successfully"})

    @extend_schema(
        request=AuthenticateSerializer,
        responses={204: None, **ERRORS},
        summary="Delete this machine's account (the votes stay, pseudonymous)",
    )
    def delete(self, request: Request) -> Response:
        d = _validated(AuthenticateSerializer, request)
        services.delete_account(
            user_id=d["userId"], username=d["username"], password=d.get("password")
        )
        return Response(status=204)


class AuthenticateView(_AccountView):
    @extend_schema(
        request=AuthenticateSerializer,
        responses={200: dict, **ERRORS},
        summary="Extension: who is logged in (by machine id first, then by username)",
    )
    def post(self, request: Request) -> Response:
        d = _validated(AuthenticateSerializer, request)
        auth = services.authenticate(
            user_id=d["userId"], username=d["username"], password=d.get("password")
        )
        return Response(auth.answer())


class UserScoresView(APIView):
    authentication_classes: list[type[BaseAuthentication]] = []
    permission_classes: list[type[BasePermission]] = []
    throttle_classes = READ_THROTTLES

    @extend_schema(
        request=UserIdSerializer,
        # A list of lists of rows: spelled as a raw schema because drf-spectacular cannot
        # resolve a serializer nested two lists deep (it warned, and check --deploy failed).
        responses={200: SCORE_HISTORY_SCHEMA, **ERRORS},
        summary="Extension: the user's personal leaderboard over time (one list per 20 votes)",
    )
    def post(self, request: Request) -> Response:
        user_hash = pseudonymise_user(_validated(UserIdSerializer, request)["userId"])
        return Response(selectors.personal_scores(user_hash=user_hash))


def _page(request: HttpRequest, contributor: Contributor, *, private: bool) -> HttpResponse:
    context = selectors.personal_page(contributor=contributor)
    chart = charts.rank_history(context["history"], context["checkpoints"])
    # As on the main board: models below its vote minimum are listed apart, as provisional.
    current = context["current"]
    response = render(
        request,
        "contributors/personal.html",
        {
            **context,
            "ranked": [s for s in current if not s.get("provisional")],
            "provisional": [s for s in current if s.get("provisional")],
            "board_min_votes": min_votes(),
            "private": private,
            "board": lb_selectors.board(),
            "charts": [("rank-history", chart)] if chart else [],
        },
    )
    if private:
        response["X-Robots-Tag"] = "noindex, nofollow"
    return response


def personal_by_username(request: HttpRequest, username: str) -> HttpResponse:
    contributor = selectors.contributor_by_username(username=username)
    if contributor is None:
        raise Http404("No contributor with this username")
    return _page(request, contributor, private=False)


# The link is the credential: no shared cache may keep the page, nor the browser on disk.
@cache_control(private=True, no_store=True)
def personal_by_token(request: HttpRequest, token: str) -> HttpResponse:
    contributor = selectors.contributor_by_token(token=token)
    if contributor is None:
        raise Http404("Unknown link")
    return _page(request, contributor, private=True)


def top_contributors(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "contributors/top.html",
        {**selectors.top_contributors(), "board": lb_selectors.board()},
    )


def take_part(request: HttpRequest) -> HttpResponse:
    # The address as this request reached us: scheme from X-Forwarded-Proto when a trusted
    # proxy sent it (TRUSTED_PROXIES, SECURE_PROXY_SSL_HEADER), host from Host (checked
    # against ALLOWED_HOSTS), plus any script prefix. Not cached per snapshot: it varies by host.
    server_url = request.build_absolute_uri(reverse("leaderboard")).rstrip("/")
    return render(
        request,
        "contributors/take_part.html",
        {
            "server_url": server_url,
            "min_votes": settings.PERSONAL_MIN_VOTES,
            "board": lb_selectors.board(),
        },
    )
