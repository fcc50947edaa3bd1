"""Refuse oversized request bodies with a clear 413 before anything reads them."""

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
