"""Request guards and plumbing that run before any view.

* `CollapseLeadingSlashesMiddleware` serves `//route` as `/route` (an extension whose server
  URL ends in a slash sends `//route`).
* `BodySizeLimitMiddleware` refuses oversized bodies with a clear 413 before anything reads them.
* `HostileUrlMiddleware` answers 400 for a NUL character in the path or a query parameter
  (PostgreSQL text cannot hold one, so it would fail deep inside a query), naming the field.
* `DatabaseUnavailableMiddleware` turns "the database does not answer" anywhere in a view
  into a 503 in the API's error shape with `Retry-After`, instead of Django's HTML 500.
* `CachedCSPMiddleware` is django-csp's middleware with the policy built once: django-csp
  rebuilds the same header text from the settings for every response (~0.1 ms, a tenth
  of a vote's CPU); responses with their own policy or a nonce still get django-csp's.
"""

from __future__ import annotations

import logging

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import JsonResponse

from .errors import database_unavailable_body, is_database_unavailable

log = logging.getLogger(__name__)


def body_limit(path: str) -> int | None:
    """The body limit of `path` in bytes; None where Django's own limits apply (the admin)."""
    if path.startswith("/admin/"):
        return None
    return (
        settings.ARENA_MAX_BATCH_BODY_BYTES
        if path.endswith("/batch")
        else settings.ARENA_MAX_BODY_BYTES
    )


class BodySizeLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
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


class HostileUrlMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
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
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not is_database_unavailable(exception):
            return None
        log.warning("Database unavailable on %s: %s", request.path, type(exception).__name__)
        response = JsonResponse(database_unavailable_body(), status=503)
        response["Retry-After"] = str(settings.ARENA_RETRY_AFTER_SECONDS)
        return response


# Attributes by which a view (csp.decorators) gives a response a policy of its own.
_CSP_OVERRIDES = (
    "_csp_config",
    "_csp_update",
    "_csp_replace",
    "_csp_config_ro",
    "_csp_update_ro",
    "_csp_replace_ro",
)
_csp_policies: dict[bool, str] = {}  # report_only -> header text from the settings alone


@receiver(setting_changed)
def _forget_csp_policies(*, setting, **kwargs) -> None:
    if setting.startswith("CONTENT_SECURITY_POLICY"):
        _csp_policies.clear()


def _settings_policy(report_only: bool) -> str:
    policy = _csp_policies.get(report_only)
    if policy is None:
        policy = _csp_policies[report_only] = build_policy(report_only=report_only)
    return policy


class CachedCSPMiddleware(CSPMiddleware):
    """django-csp's `CSPMiddleware`, answering the common case from a cached policy."""

    def process_response(self, request, response):
        if response.status_code == 304:
            # No body for a policy to protect, and a cache that revalidates keeps the stored
            # 200's headers, CSP included (RFC 9111, 4.3.4): a 304 skips it (a fifth of its
            # CPU in the app).
            return response
        if getattr(request, "_csp_nonce", None) is not None or any(
            getattr(response, name, None) is not None for name in _CSP_OVERRIDES
        ):
            return super().process_response(request, response)
        # What django-csp then does with build_policy(no config, no nonce), step by step.
        if response.status_code in (500, 404) and settings.DEBUG:
            return response
        for report_only, header, exempt, setting in (
            (False, HEADER, "_csp_exempt", "CONTENT_SECURITY_POLICY"),
            (True, HEADER_REPORT_ONLY, "_csp_exempt_ro", "CONTENT_SECURITY_POLICY_REPORT_ONLY"),
        ):
            policy = _settings_policy(report_only)
            if not policy or header in response or getattr(response, exempt, False) is not False:
                continue
            prefixes = (getattr(settings, setting, None) or {}).get("EXCLUDE_URL_PREFIXES") or ()
            if not request.path_info.startswith(tuple(prefixes)):
                response[header] = policy
        # As django-csp: a nonce asked for after the header is written is an error.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response
