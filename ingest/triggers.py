"""Schedule a recompute after new votes, debounced: one run per window, not one per vote.

After a vote commits, `votes_arrived` sets the pending flag (`PENDING_KEY`, `cache.add` with
an expiry); the call that set it schedules a recompute `RECOMPUTE_DEBOUNCE_SECONDS` later.
The recompute clears the flag before it reads the battles. So every vote is read by a
recompute that starts within the debounce of its commit: either its own call set the flag
(and scheduled that run), or the flag was already set, and the run it stands for clears it,
and so reads, after this vote committed.

Moderation (leaderboard/board_changes.py) schedules through `schedule_recompute` too, with
a shorter delay: a moderator waits for the board, not for more votes.

The recompute lives in the leaderboard app, a layer above ingest, so it is named here by
string (`RECOMPUTE_TASK`) rather than imported. In embedded mode (no worker; tasks run
eagerly) it runs on a thread of this process once the debounce has passed.

Never the vote's failure: with Redis unreachable the flag cannot be set (django-redis
answers `add` with no) and the beat schedule recomputes anyway; a flag whose task could not
be published is deleted again, and its expiry is a short margin past the debounce, so a
lost one delays the next board by at most that much.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery import Task
from django.conf import settings
from django.core.cache import cache
from django.db import close_old_connections

log = logging.getLogger(__name__)

PENDING_KEY = "lb:recompute-pending"
# How long past the debounce a pending flag outlives a recompute that never cleared it.
PENDING_MARGIN_SECONDS = 60
RECOMPUTE_TASK = "leaderboard.tasks.recompute_leaderboard"


def recompute_task() -> Task[Any, Any]:
    """The leaderboard's recompute task, looked up by name in the Celery app.

    Registered in every process, web ones too: arena_site's ready() imports every app's
    tasks module (tests/arena_site/test_apps.py).
    """
    from celery import current_app

    return current_app.tasks[RECOMPUTE_TASK]


def votes_arrived() -> None:
    """Called after a vote commits: make sure a recompute will read it (see module doc)."""
    if not settings.RECOMPUTE_ON_VOTES:
        return
    schedule_recompute(trigger="votes", delay=settings.RECOMPUTE_DEBOUNCE_SECONDS)


def schedule_recompute(*, trigger: str, delay: float) -> bool:
    """Make sure a recompute starts within `delay` seconds (or within the pending one's).

    Called after the change it must read has committed. Returns whether this call scheduled
    the run (False: one was already pending, and it reads this change; or scheduling
    failed and the beat schedule recomputes anyway). `delay` must not exceed
    RECOMPUTE_DEBOUNCE_SECONDS, so a pending flag always stands for a run that starts
    within the debounce.
    """
    try:
        if not cache.add(PENDING_KEY, 1, timeout=delay + PENDING_MARGIN_SECONDS):
            return False
        if settings.CELERY_TASK_ALWAYS_EAGER:
            runner = threading.Timer(delay, _run_in_process, kwargs={"trigger": trigger})
            runner.daemon = True
            runner.start()
            return True
        try:
            recompute_task().apply_async(kwargs={"trigger": trigger}, countdown=delay)
        except Exception:
            cache.delete(PENDING_KEY)  # so the next change schedules it
            raise
    except Exception:
        # Never the vote's (or the moderator's) failure: the change is stored; the beat
        # schedule recomputes anyway.
        log.exception("Scheduling the %s-triggered recompute failed", trigger)
        return False
    return True


def _run_in_process(trigger: str = "votes") -> None:
    try:
        recompute_task().apply(kwargs={"trigger": trigger})
    except Exception:
        log.exception("In-process recompute failed")
    finally:
        close_old_connections()
