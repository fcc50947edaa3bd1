"""App config for core: machine credentials and the audit log, plus shared plumbing."""

from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Access and audit"

    def ready(self) -> None:
        from . import (
            receivers,  # noqa: F401  (API-key cache invalidation)
            schema,  # noqa: F401  (the API-key security scheme for the OpenAPI schema)
        )
