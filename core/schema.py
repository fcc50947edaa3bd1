"""The OpenAPI schema's shared parts: the API-key security scheme and the error responses every route can give.

* `ApiKeyScheme` documents `core.auth.ApiKeyAuthentication` (`Authorization: Bearer <key>`).
  Routes that also take anonymous posts (`ARENA_ALLOW_ANONYMOUS`) list `{}` beside it, the
  OpenAPI spelling of "no credentials needed"; the batch route lists the key alone.
* `add_common_responses` (a drf-spectacular post-processing hook) gives every operation
  the error answers the site's plumbing can give whatever the view: 400 (malformed JSON,
  NUL in the URL), 401 (a bad key on a route that reads keys), 413 (body over the limit),
  415 (not JSON), 429 (throttled, with Retry-After) and 503 (database down, with
  Retry-After), all in the `{error, message, fields}` shape, so the schema names every
  status and media type a client can receive.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema

ERROR_SCHEMA = {
    "type": "object",
    "description": "Every error: a code, one line naming each offending field, and per-field messages.",
    "properties": {
        "error": {"type": "string"},
        "message": {"type": "string"},
        "fields": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
        },
    },
    "required": ["error", "message"],
}
RETRY_AFTER = {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}}
COMMON = {
    "400": ("Invalid input; `message` names each field and the problem.", {}),
    "401": ("The API key is malformed, unknown or revoked (or required and missing).", {}),
    "413": ("The body is over the route's size limit.", {}),
    "415": ("The body is not JSON.", {}),
    "429": ("Rate limited.", RETRY_AFTER),
    "503": ("The database is not answering; try again after Retry-After.", RETRY_AFTER),
}
BODY_ONLY = {"413", "415"}  # only routes that take a body
KEYED_ONLY = {"401"}  # only routes that read API keys


class ApiKeyScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]  # untyped base
    target_class = "core.auth.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_requirement(self, auto_schema: AutoSchema) -> list[dict[str, list[Any]]]:
        from .auth import HasApiKey

        perms = {type(p) for p in auto_schema.view.get_permissions()}
        if HasApiKey in perms:
            return [{"ApiKey": []}]
        return [{"ApiKey": []}, {}]  # a key is optional: anonymous clients are served too

    def get_security_definition(self, auto_schema: AutoSchema) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API key issued in the admin (API clients → Add): "
            "`Authorization: Bearer arena_…`. Lifts the anonymous rate limits.",
        }


def add_common_responses(result: dict[str, Any], **_hook_kwargs: Any) -> dict[str, Any]:
    """Post-processing hook: the plumbing's error responses on every operation (see module doc)."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault("Error", ERROR_SCHEMA)
    ref = {"$ref": "#/components/schemas/Error"}
    for methods in result.get("paths", {}).values():
        for operation in methods.values():
            _add_to_operation(operation, ref)
    return result


def _add_to_operation(operation: dict[str, Any], ref: dict[str, str]) -> None:
    responses = operation.setdefault("responses", {})
    # No authenticator at all (the public reads): say so, rather than say nothing.
    security = operation.setdefault("security", [{}])
    unique: list[dict[str, Any]] = []
    for item in security:
        if item not in unique:
            unique.append(item)
    operation["security"] = unique
    keyed = any("ApiKey" in item for item in unique)
    for status, (description, headers) in COMMON.items():
        if status in BODY_ONLY and "requestBody" not in operation:
            continue
        if status in KEYED_ONLY and not keyed:
            continue
        entry = responses.setdefault(status, {"description": description})
        content = entry.setdefault("content", {})
        content.setdefault("application/json", {"schema": ref})
        for media in content.values():
            media.setdefault("schema", ref)
        if headers:
            entry.setdefault("headers", {}).update(headers)
    for status, entry in responses.items():
        if int(status) >= 400 and not entry.get("content"):
            entry["content"] = {"application/json": {"schema": ref}}
