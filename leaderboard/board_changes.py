"""Recomputes that follow moderation, and the board's "being recomputed" note.

When a staff member changes what the board counts (core/board_changes.py), a recompute is
scheduled through the vote trigger's debounce (ingest/triggers.py) with a shorter delay,
`RECOMPUTE_MODERATION_DEBOUNCE_SECONDS`: a few quick edits still make one run. Until a run
that started after the change has published, `MODERATION_KEY` holds when the change was
announced, and the board says it is being recomputed.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.dispatch import receiver

from core.board_changes import board_inputs_changed
from ingest.triggers import PENDING_KEY, schedule_recompute

from .models import Snapshot

log = logging.getLogger(__name__)

MODERATION_KEY = "lb:moderation-pending"
# The board's note is read on every board request: asked of the shared cache at most this
# often per process.
NOTE_MEMO_SECONDS = 1.0
_memo_lock = threading.Lock()
_memo: tuple[float, bool] = (-1e9, False)


def moderation_delay() -> int:
    """Seconds between a moderator's change and the recompute it schedules."""
    return int(
        min(settings.RECOMPUTE_MODERATION_DEBOUNCE_SECONDS, settings.RECOMPUTE_DEBOUNCE_SECONDS)
    )


def expected_seconds() -> int:
    """When the board should show a change made now: the wait plus the last run's length,
    rounded up to 5 s."""
    wait = settings.RECOMPUTE_DEBOUNCE_SECONDS if cache.get(PENDING_KEY) else moderation_delay()
    last = (
        Snapshot.objects.filter(status=Snapshot.Status.PUBLISHED)
        .order_by("-id")
        .values_list("duration_seconds", flat=True)
        .first()
    )
    return int(5 * math.ceil((wait + (last or 0.0) + 1) / 5))


@receiver(board_inputs_changed)
def _board_inputs_changed(*, what: str, **_kwargs: Any) -> str:
    if not settings.RECOMPUTE_ON_MODERATION:
        minutes = max(1, round(settings.RECOMPUTE_INTERVAL_SECONDS / 60))
        return f"The board follows at the next scheduled recompute (every {minutes} min)."
    seconds = expected_seconds()
    transaction.on_commit(lambda: _schedule(what))
    return f"The public board is recomputed within about {seconds} s."


def _schedule(what: str) -> None:
    cache.set(MODERATION_KEY, time.time(), timeout=settings.RECOMPUTE_INTERVAL_SECONDS + 60)
    _forget()
    scheduled = schedule_recompute(trigger="moderation", delay=moderation_delay())
    log.info(
        "Board inputs changed (%s); recompute %s",
        what,
        "scheduled" if scheduled else "already pending",
    )


def settle(*, started_at: float) -> None:
    """After a run that started at `started_at` published: drop the note if it read the change."""
    at = cache.get(MODERATION_KEY)
    if at is not None and float(at) <= started_at:
        cache.delete(MODERATION_KEY)
        _forget()


def _forget() -> None:
    """This process's memo of the note is stale (the others' lapse within a second)."""
    global _memo
    with _memo_lock:
        _memo = (-1e9, False)


def recompute_pending() -> bool:
    """Whether a moderation change is waiting for its recompute (memoised for a second)."""
    global _memo
    now = time.monotonic()
    with _memo_lock:
        at, value = _memo
        if now - at < NOTE_MEMO_SECONDS and settings.ARENA_LOCAL_CACHE:
            return value
    value = cache.get(MODERATION_KEY) is not None
    with _memo_lock:
        _memo = (now, value)
    return value
