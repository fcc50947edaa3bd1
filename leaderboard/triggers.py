"""Schedule a recompute after new votes, debounced: one run per window, not one per vote."""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.core.cache import cache
from django.db import close_old_connections

log = logging.getLogger(__name__)


def votes_arrived() -> None:
    """Called after a vote commits. The first vote of a window schedules the recompute."""
    if not settings.RECOMPUTE_ON_VOTES:
        return
    from .tasks import PENDING_KEY, recompute_leaderboard

    delay = settings.RECOMPUTE_DEBOUNCE_SECONDS
    if not cache.add(PENDING_KEY, 1, timeout=delay + settings.RECOMPUTE_LOCK_SECONDS):
        return
    if settings.CELERY_TASK_ALWAYS_EAGER:
        # Embedded setup: no worker, so run in a background thread of this process.
        timer = threading.Timer(delay, _run_in_process)
        timer.daemon = True
        timer.start()
    else:
        recompute_leaderboard.apply_async(kwargs={"trigger": "votes"}, countdown=delay)


def _run_in_process() -> None:
    from .tasks import recompute_leaderboard

    try:
        recompute_leaderboard.apply(kwargs={"trigger": "votes"})
    except Exception:
        log.exception("In-process recompute failed")
    finally:
        close_old_connections()
