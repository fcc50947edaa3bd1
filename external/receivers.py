"""Signal hooks: correlations follow every newly published leaderboard snapshot."""

from __future__ import annotations

from django.dispatch import receiver

from leaderboard.signals import snapshot_ready

from .services import schedule_correlations


@receiver(snapshot_ready)
def _snapshot_ready(snapshot_id: int, **_kwargs: object) -> None:
    # Queued after commit and never raising, so the recompute cannot fail because of us.
    schedule_correlations(snapshot_id=snapshot_id)
