"""App config for core: machine credentials and the audit log, plus shared plumbing."""

from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Access and audit"

    def ready(self) -> None:
        # receivers: API-key cache invalidation; schema: the API key in the OpenAPI schema.
        from . import receivers, schema  # noqa: F401
