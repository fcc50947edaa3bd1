"""Celery tasks of the leaderboard: recompute (beat-scheduled and vote-triggered)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.db import InterfaceError, OperationalError

from .locks import single_flight
from .recompute import recompute

log = logging.getLogger(__name__)
PENDING_KEY = "lb:recompute-pending"


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
            return None
        cache.delete(PENDING_KEY)
        return recompute(trigger=trigger).pk
