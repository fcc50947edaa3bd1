"""One error shape for every API response: {"error", "message", "fields"}.

Services raise an `ApplicationError` (or a subclass declared in their own app); the one DRF
exception handler here turns it, and DRF's own exceptions, into that shape. `message` names
each offending field by its dotted path (e.g. `completionItems.0.model`) and says what is
wrong with it, so a client developer can fix the request without docs.

When the database does not answer, every route (votes and reads, API and pages) answers
503 `{"error": "unavailable", "message"}` with `Retry-After` (`ARENA_RETRY_AFTER_SECONDS`):
here for API views, in `core.middleware.DatabaseUnavailableMiddleware` for the others.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import InterfaceError, OperationalError
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler


class ApplicationError(Exception):
    """An error a service raises on purpose; the API answers `status` with `error`=`code`."""

    status = 400
    code = "invalid"

    def __init__(self, message: str, *, fields: dict[str, list[str]] | None = None):
        super().__init__(message)
        self.message = message
        self.fields = fields

    def body(self) -> dict[str, object]:
        body: dict[str, object] = {"error": self.code, "message": self.message}
        if self.fields is not None:
            body["fields"] = self.fields
        return body


class ActionRefused(ApplicationError):
    """A staff action that cannot be carried out as asked (the message says why)."""

    code = "refused"


class Conflict(ApplicationError):
    status = 409
    code = "conflict"


def flatten_errors(detail: object, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested error detail as {"a.0.b": ["message", ...]}."""
    out: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = "body" if key == "non_field_errors" else str(key)
            out.update(flatten_errors(value, f"{prefix}.{name}" if prefix else name))
    elif isinstance(detail, list) and detail and all(isinstance(x, str) for x in detail):
        out[prefix or "body"] = [str(x) for x in detail]
    elif isinstance(detail, list):
        for i, value in enumerate(detail):
            if value:
                out.update(flatten_errors(value, f"{prefix}.{i}" if prefix else str(i)))
    else:
        out[prefix or "body"] = [str(detail)]
    return out


def summary(fields: dict[str, list[str]], limit: int = 5) -> str:
    """The first message of up to `limit` fields, as one line."""
    parts = [f"{path}: {msgs[0]}" for path, msgs in list(fields.items())[:limit]]
    if len(fields) > limit:
        parts.append(f"… and {len(fields) - limit} more")
    return "; ".join(parts)


def is_database_unavailable(exc: BaseException) -> bool:
    """Whether `exc` says the database cannot be reached (down, restarting, connection lost)."""
    if isinstance(exc, OperationalError | InterfaceError):
        return True
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a dependency
        return False
    return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)


def database_unavailable_body() -> dict[str, str]:
    return {
        "error": "unavailable",
        "message": "The database is not answering. Votes are idempotent on their pair id: "
        f"send the same request again in {settings.ARENA_RETRY_AFTER_SECONDS} s.",
    }


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if is_database_unavailable(exc):
        response = Response(database_unavailable_body(), status=503)
        response["Retry-After"] = str(settings.ARENA_RETRY_AFTER_SECONDS)
        return response
    if isinstance(exc, ApplicationError):
        return Response(exc.body(), status=exc.status)
    handled = exception_handler(exc, context)
    if handled is None:
        return None
    response = handled
    if isinstance(exc, ValidationError):
        fields = flatten_errors(exc.detail)
        response.data = {"error": "invalid", "message": summary(fields), "fields": fields}
    else:
        code = getattr(exc, "default_code", "error")
        response.data = {"error": code, "message": str(getattr(exc, "detail", exc))}
    return response
