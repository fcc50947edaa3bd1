"""Request guards and plumbing that run before any view.

* `CollapseLeadingSlashesMiddleware` serves `//route` as `/route` (an extension whose server
  URL ends in a slash sends `//route`).
* `BodySizeLimitMiddleware` refuses oversized bodies with a clear 413 before anything reads them.
* `HostileUrlMiddleware` answers 400 for a NUL character in the path or a query parameter
  (PostgreSQL text cannot hold one, so it would fail deep inside a query), naming the field.
* `DatabaseUnavailableMiddleware` turns "the database does not answer" anywhere in a view
  into a 503 in the API's error shape with `Retry-After`, instead of Django's HTML 500.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from .errors import database_unavailable_body, is_database_unavailable

log = logging.getLogger(__name__)


def body_limit(path: str) -> int | None:
    """The body limit of `path` in bytes; None where Django's own limits apply (the admin)."""
    if path.startswith("/admin/"):
        return None
    return int(
        settings.ARENA_MAX_BATCH_BODY_BYTES
        if path.endswith("/batch")
        else settings.ARENA_MAX_BODY_BYTES
    )


class BodySizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        limit = body_limit(request.path)
        if limit is not None and length > limit:
            return JsonResponse(
                {
                    "error": "body_too_large",
                    "message": f"The request body is {length:,} bytes; "
                    f"the limit for {request.path} is {limit:,} bytes.",
                },
                status=413,
            )
        return self.get_response(request)


class CollapseLeadingSlashesMiddleware:
    """Serve `//route` as `/route`.

    The extension builds every URL as `${arena.serverUrl}/route`, so a server URL entered
    with a trailing slash sends `//route` (and would get 404 everywhere).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        old = request.path_info
        if old.startswith("//"):
            new = "/" + old.lstrip("/")
            request.path_info = new
            if request.path.endswith(old):  # keep a SCRIPT_NAME prefix in front
                request.path = request.path[: len(request.path) - len(old)] + new
        return self.get_response(request)


class HostileUrlMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        field = None
        if "\x00" in request.path:
            field = "path"
        elif "%00" in request.META.get("QUERY_STRING", "") or "\x00" in request.META.get(
            "QUERY_STRING", ""
        ):
            field = next(
                (
                    f"query parameter {key!r}"
                    for key, values in request.GET.lists()
                    if "\x00" in key or any("\x00" in v for v in values)
                ),
                "query string",
            )
        if field is not None:
            return JsonResponse(
                {
                    "error": "invalid",
                    "message": f"{field}: must not contain a NUL character.",
                    "fields": {field: ["Must not contain a NUL character."]},
                },
                status=400,
            )
        return self.get_response(request)


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_database_unavailable(exception):
            return None
        log.warning("Database unavailable on %s: %s", request.path, type(exception).__name__)
        response = JsonResponse(database_unavailable_body(), status=503)
        response["Retry-After"] = str(settings.ARENA_RETRY_AFTER_SECONDS)
        return response
