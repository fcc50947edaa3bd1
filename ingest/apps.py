"""App config for ingest."""

from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "ingest"
    verbose_name = "Battle ingest"

    def ready(self) -> None:
        from . import schema  # noqa: F401  (the model-key type of the OpenAPI schema)
