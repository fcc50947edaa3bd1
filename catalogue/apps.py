"""App config for the model catalogue."""

from django.apps import AppConfig


class CatalogueConfig(AppConfig):
    name = "catalogue"
    verbose_name = "Model catalogue"

    def ready(self) -> None:
        from . import receivers  # noqa: F401  (catalogue cache invalidation)
