"""How the OpenAPI schema (drf-spectacular) describes the API-key authentication of core.auth.

Without it every view using `ApiKeyAuthentication` makes the schema generator warn, and
`check --deploy` (which generates the schema) reports one warning per view.
"""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "core.auth.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API key from the admin (API clients): "
            "`Authorization: Bearer <key>` (or `X-API-Key: <key>`). Optional on the vote and "
            "pair routes (anonymous clients are limited per IP and user id); required for "
            "batches.",
        }
