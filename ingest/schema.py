"""The OpenAPI type of a model key: exactly the keys (and aliases) the catalogue resolves now.

`catalogue.fields.ModelKeyField` accepts a string only if it names a catalogue model or an
alias, so the schema lists those as an enum, read from the catalogue whenever the schema
is generated (`/api/schema/`). A client or a fuzzer reading the schema then sends keys the
server accepts, and a key outside the list is one the server refuses with 400.

The type is one component (`ModelKey`) that every model-key field refers to: inlined, the
same list under `model_a` and `model_b` made drf-spectacular warn about one enum with two
names on every schema request (a non-JSON line in the web log).
"""

from __future__ import annotations

from typing import Any

from django.db import DatabaseError
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent

from catalogue.selectors import catalogue


class ModelKeySchema(OpenApiSerializerFieldExtension):  # type: ignore[no-untyped-call]  # untyped base
    target_class = "catalogue.fields.ModelKeyField"

    def map_serializer_field(self, auto_schema: AutoSchema, direction: str) -> dict[str, str]:
        schema: dict[str, Any] = {
            "type": "string",
            "description": "A model key or alias from the catalogue (see /list_models).",
        }
        try:
            keys = sorted(catalogue())
        except DatabaseError:  # `manage.py spectacular` without a database
            keys = []
        if keys:
            schema["enum"] = keys
        component = ResolvedComponent(  # type: ignore[no-untyped-call]  # untyped library
            name="ModelKey", type=ResolvedComponent.SCHEMA, object="ModelKey", schema=schema
        )
        auto_schema.registry.register_on_missing(component)
        return component.ref
