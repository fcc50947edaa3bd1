"""App config for external leaderboards: sources, scores, aliases and correlations."""

from django.apps import AppConfig


class ExternalConfig(AppConfig):
    name = "external"
    verbose_name = "External leaderboards and correlations"

    def ready(self) -> None:
        from . import receivers  # noqa: F401  (snapshot_ready and alias-change hooks)
