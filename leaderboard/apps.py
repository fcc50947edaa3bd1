"""App config for the leaderboard: snapshots, the recompute and the public board."""

from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Leaderboard"

    def ready(self) -> None:
        from . import board_changes, signals  # noqa: F401
