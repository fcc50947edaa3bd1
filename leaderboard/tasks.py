"""Celery tasks of the leaderboard: recompute (beat-scheduled, vote-triggered, or from the admin)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from core.locks import single_flight
from ingest.triggers import PENDING_KEY

from .recompute import recompute

log = logging.getLogger(__name__)
STATUS_KEY = "lb:recompute-status"


def set_status(state: str, **extra) -> None:
    """What the admin's "Recompute now" page shows: queued, running, done, failed or busy."""
    cache.set(STATUS_KEY, {"state": state, "at": timezone.now().isoformat(), **extra}, 24 * 3600)


def get_status() -> dict | None:
    return cache.get(STATUS_KEY)


@shared_task(
    bind=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=5,
    retry_backoff_max=300,
    max_retries=5,
)
def recompute_leaderboard(self, trigger: str = "beat") -> int | None:
    """Recompute and publish; returns the snapshot id, or None when another run holds the lock."""
    with single_flight("recompute", timeout=settings.RECOMPUTE_LOCK_SECONDS) as mine:
        if not mine:
            if trigger == "votes":
                # Votes that arrived after the running recompute read the battles still
                # need a board: try again after the debounce.
                raise self.retry(
                    countdown=settings.RECOMPUTE_DEBOUNCE_SECONDS, max_retries=20, exc=None
                )
            log.info("Recompute already running; %s trigger skipped", trigger)
            if trigger == "admin":
                set_status("busy", trigger=trigger)
            return None
        cache.delete(PENDING_KEY)
        set_status("running", trigger=trigger)
        try:
            snapshot = recompute(trigger=trigger)
        except Exception as exc:
            set_status("failed", trigger=trigger, error=f"{type(exc).__name__}: {exc}"[:500])
            raise
        set_status(
            "done",
            trigger=trigger,
            snapshot_id=snapshot.pk,
            battles=snapshot.battles,
            seconds=round(snapshot.duration_seconds, 2),
        )
        return snapshot.pk
