"""Request plumbing: refuse oversized bodies with a clear 413; serve `//route` as `/route`."""

from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse


class BodySizeLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        limit = (
            settings.ARENA_MAX_BATCH_BODY_BYTES
            if request.path.endswith("/batch")
            else settings.ARENA_MAX_BODY_BYTES
        )
        if length > limit and not request.path.startswith("/admin/"):
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

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        old = request.path_info
        if old.startswith("//"):
            new = "/" + old.lstrip("/")
            request.path_info = new
            if request.path.endswith(old):  # keep a SCRIPT_NAME prefix in front
                request.path = request.path[: len(request.path) - len(old)] + new
        return self.get_response(request)
