"""App config for the leaderboard: snapshots, the recompute and the public board."""

from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "leaderboard"
    verbose_name = "Leaderboard"

    def ready(self) -> None:
        # tasks: registered in every process (web ones too), as lower apps schedule the
        # recompute by its task name (ingest.triggers.RECOMPUTE_TASK).
        from . import signals, tasks  # noqa: F401
