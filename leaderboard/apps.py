"""App config for the leaderboard: the catalogue of models and the public board."""

from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Leaderboard and model catalogue"

    def ready(self) -> None:
        from . import signals  # noqa: F401  (cache invalidation hooks)
