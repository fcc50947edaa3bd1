"""Schedule a recompute after new votes, debounced: one run per window, not one per vote.

The protocol, shared by every web process: a *look* sets the pending flag
(`PENDING_KEY`, SET NX with an expiry); the look that sets it schedules a recompute
`RECOMPUTE_DEBOUNCE_SECONDS` later. The recompute clears the flag before it reads the
battles. So a vote that committed before a look is always read by a recompute: the flag
was either set by that look (its recompute comes later) or already set (the pending
recompute clears it, hence reads, after the look).

Each process looks at most once per window (`LOCAL_CHECK_SECONDS`, 1 s, or half the
debounce if that is shorter) instead of once per vote: a look is a Redis round trip, which
costs as much CPU as storing the vote. A vote that arrives within the window after this
process's last look cannot rely on it (a recompute may have cleared the flag and started
reading in between), so it arms a *trailing look* at the end of the window, on a timer
thread; later votes of that window share it. Every vote is therefore followed by a look
within one window of its commit, and gets a recompute within the debounce plus one second
(tests/ingest/test_hot_path.py). The window is at most half the debounce so that a burst's
trailing look comes well before the recompute it scheduled, rather than racing it and
queueing a second run. A process that exits runs its armed trailing look first (atexit);
a killed one leaves its last second to the beat schedule.

A look uses the process's own Redis client (`core.redis_client`) on the cache's key for
`PENDING_KEY`, so the task's `cache.delete` clears it; without Redis (embedded mode) it is
a Django cache call. The recompute lives in the leaderboard app, a layer above ingest, so it
is named here by string (`RECOMPUTE_TASK`) rather than imported.

A look never fails the vote that made it: with Redis unreachable (or its breaker open) the
look is given up, this process forgets it looked (so the next vote after the outage looks
again) and the beat schedule covers the gap. A pending flag that was set but whose task
could not be published is deleted again, and the flag's expiry is a short margin past the
debounce rather than the recompute's whole lease, so a lost one delays the next board by
at most that much.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time

from django.conf import settings
from django.core.cache import cache
from django.db import close_old_connections

from core.redis_client import RedisUnavailable, guarded, shared_redis, shares_cache_redis

log = logging.getLogger(__name__)

LOCAL_CHECK_SECONDS = 1.0
PENDING_KEY = "lb:recompute-pending"
# How long past the debounce a pending flag outlives a recompute that never cleared it.
PENDING_MARGIN_SECONDS = 60
RECOMPUTE_TASK = "leaderboard.tasks.recompute_leaderboard"

_lock = threading.Lock()
_looked_at = float("-inf")  # time.monotonic() of this process's last look
_trailing: threading.Timer | None = None  # the armed trailing look, if any


def votes_arrived() -> None:
    """Called after a vote commits: make sure a recompute will read it (see module doc)."""
    global _looked_at, _trailing
    if not settings.RECOMPUTE_ON_VOTES:
        return
    window = min(LOCAL_CHECK_SECONDS, settings.RECOMPUTE_DEBOUNCE_SECONDS / 2)
    now = time.monotonic()
    with _lock:
        if now - _looked_at >= window:
            _looked_at = now
            look = True
        else:
            look = False
            if _trailing is None:
                _trailing = threading.Timer(_looked_at + window - now, _trailing_look)
                _trailing.daemon = True
                _trailing.start()
    if look:
        _safe_look()


def _safe_look() -> None:
    global _looked_at
    try:
        _look()
    except RedisUnavailable:
        with _lock:
            _looked_at = float("-inf")  # look again on the next vote
    except Exception:
        # Never the vote's failure: it is stored; the beat schedule recomputes anyway.
        log.exception("Scheduling the vote-triggered recompute failed")


def _trailing_look() -> None:
    global _looked_at, _trailing
    with _lock:
        # Cleared before looking: a vote that still saw this timer armed committed before
        # the look below, and one that no longer sees it arms a new one or looks itself.
        _trailing = None
        _looked_at = time.monotonic()
    try:
        _safe_look()
    finally:
        close_old_connections()


@atexit.register
def _flush() -> None:
    """Run an armed trailing look now (a worker shutting down)."""
    timer = _trailing
    if timer is not None:
        timer.cancel()
        _trailing_look()


def _claim_pending(key: str, timeout: int) -> bool:
    """Set the pending flag if it is not set; True if this call set it."""
    client = shared_redis() if shares_cache_redis() else None
    if client is not None:
        # The value and key are what `cache.add` would write (ints are stored as such).
        return bool(guarded(lambda: client.set(cache.make_key(key), 1, ex=timeout, nx=True)))
    return cache.add(key, 1, timeout=timeout)


def _release_pending(key: str) -> None:
    client = shared_redis() if shares_cache_redis() else None
    try:
        if client is not None:
            guarded(lambda: client.delete(cache.make_key(key)))
        else:
            cache.delete(key)
    except RedisUnavailable:
        pass  # it expires PENDING_MARGIN_SECONDS after the debounce


def recompute_task():
    """The leaderboard's recompute task, looked up by name in the Celery app.

    Registered in every process, web ones too: arena_site's ready() imports every app's
    tasks module (tests/ops/test_task_discovery.py).
    """
    from celery import current_app

    return current_app.tasks[RECOMPUTE_TASK]


def _look() -> None:
    """Set the pending flag; if this set it, schedule the recompute after the debounce."""
    delay = settings.RECOMPUTE_DEBOUNCE_SECONDS
    if not _claim_pending(PENDING_KEY, delay + PENDING_MARGIN_SECONDS):
        return
    if settings.CELERY_TASK_ALWAYS_EAGER:
        # Embedded setup: no worker, so run in a background thread of this process.
        timer = threading.Timer(delay, _run_in_process)
        timer.daemon = True
        timer.start()
    else:
        try:
            guarded(
                lambda: recompute_task().apply_async(kwargs={"trigger": "votes"}, countdown=delay)
            )
        except Exception:
            _release_pending(PENDING_KEY)  # so the next look schedules it
            raise


def _run_in_process() -> None:
    try:
        recompute_task().apply(kwargs={"trigger": "votes"})
    except Exception:
        log.exception("In-process recompute failed")
    finally:
        close_old_connections()
