"""One error shape for every API response: {"error", "message", "fields"}.

`message` names each offending field by its dotted path (e.g. `completionItems.0.model`)
and says what is wrong with it, so a client developer can fix the request without docs.
"""

from __future__ import annotations

from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler

from .services import BatchRejected, PairConflict


def flatten_errors(detail, prefix: str = "") -> dict[str, list[str]]:
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


def _summary(fields: dict[str, list[str]], limit: int = 5) -> str:
    parts = [f"{path}: {msgs[0]}" for path, msgs in list(fields.items())[:limit]]
    if len(fields) > limit:
        parts.append(f"… and {len(fields) - limit} more")
    return "; ".join(parts)


def api_exception_handler(exc, context):
    if isinstance(exc, PairConflict):
        msg = "Already stored with a different vote (same pair id, different models, user or outcome)."
        return Response(
            {
                "error": "conflict",
                "message": f"pair_id '{exc.pair_id}': {msg}",
                "fields": {"pair_id": [msg]},
            },
            status=status.HTTP_409_CONFLICT,
        )
    if isinstance(exc, BatchRejected):
        fields = flatten_errors({"battles": {str(i): e for i, e in sorted(exc.errors.items())}})
        return Response(
            {
                "error": "conflict" if exc.conflict else "invalid",
                "message": "Nothing was stored. " + _summary(fields),
                "fields": fields,
            },
            status=status.HTTP_409_CONFLICT if exc.conflict else status.HTTP_400_BAD_REQUEST,
        )
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ValidationError):
        fields = flatten_errors(exc.detail)
        response.data = {"error": "invalid", "message": _summary(fields), "fields": fields}
    else:
        code = getattr(exc, "default_code", "error")
        response.data = {"error": code, "message": str(getattr(exc, "detail", exc))}
    return response
