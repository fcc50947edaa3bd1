"""Celery tasks of the leaderboard: recompute (beat-scheduled, vote-triggered, or from the
admin) and the nightly reconciliation of the maintained battle counts.

One run at a time, under the "recompute" lease (`core.locks`, `RECOMPUTE_LOCK_SECONDS`,
renewed while the run is alive): a worker killed mid-run frees it within that many
seconds, and the next run marks the dead run's snapshot row failed.
"""

from __future__ import annotations

import logging
import time

from celery import Task, shared_task
from django.conf import settings
from django.core.cache import cache
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from core.locks import held, single_flight
from core.redis_client import REDIS_ERRORS
from ingest.triggers import PENDING_KEY

from . import board_changes, fanout, incremental
from .models import Snapshot
from .recompute import DIED, mark_dead_runs, recompute

log = logging.getLogger(__name__)
STATUS_KEY = "lb:recompute-status"
LOCK_NAME = "recompute"
# What the admin's "Recompute now" page reads: state, at, trigger and what the run reported.
Status = dict[str, str | int | float]


def set_status(state: str, **extra: str | int | float) -> None:
    """What the admin's "Recompute now" page shows: queued, running, done, failed or busy."""
    cache.set(STATUS_KEY, {"state": state, "at": timezone.now().isoformat(), **extra}, 24 * 3600)


def get_status() -> Status | None:
    status: Status | None = cache.get(STATUS_KEY)
    return status


def true_status() -> Status | None:
    """The status as it really is: a "running" whose lease is gone is a run that died.

    The cached status says what the last run *said*; a run killed mid-way never says
    "failed". With no lease held (and Redis able to tell), nothing is running: such a
    status, and any snapshot row still marked running, are turned into failures.
    """
    status = get_status()
    running = status is not None and status.get("state") == "running"
    if held(LOCK_NAME) is False:
        dead = mark_dead_runs()
        if running or dead:
            status = {**(status or {}), "state": "failed", "error": DIED}
            set_status("failed", trigger=status.get("trigger", ""), error=DIED)
    return status


@shared_task(
    bind=True,
    # The database or Redis (the lease) away for a moment: try again with backoff, each
    # wait below CELERY_VISIBILITY_TIMEOUT (a longer countdown is handed out twice).
    autoretry_for=(OperationalError, InterfaceError, *REDIS_ERRORS),
    retry_backoff=5,
    retry_backoff_max=45,
    max_retries=5,
)
def recompute_leaderboard(
    self: Task[..., int | None], trigger: str = "beat", unless_published: int | None = None
) -> int | None:
    """Recompute and publish; returns the snapshot id, or None when another run holds the
    lock (or, with `unless_published`, when that run's snapshot was published)."""
    with single_flight(LOCK_NAME, timeout=settings.RECOMPUTE_LOCK_SECONDS) as mine:
        redelivered = bool((self.request.delivery_info or {}).get("redelivered"))
        if not mine:
            if trigger in ("votes", "moderation") or redelivered:
                # Votes (or a moderator's change) that arrived after the running
                # recompute read the battles still need a board: try again after the debounce. A message handed out again
                # (its worker died, or it outlived CELERY_VISIBILITY_TIMEOUT) tries again
                # too: the lease may still be the dead run's. Its retry is needed only if
                # the run now holding the lease -- which started after this message's
                # votes -- does not publish.
                holder = running_snapshot() if redelivered else None
                raise self.retry(
                    countdown=settings.RECOMPUTE_DEBOUNCE_SECONDS,
                    max_retries=20,
                    exc=None,
                    kwargs={
                        "trigger": trigger,
                        "unless_published": holder.pk if holder else unless_published,
                    },
                )
            log.info("Recompute already running; %s trigger skipped", trigger)
            if trigger == "admin":
                set_status("busy", trigger=trigger)
            return None
        if (
            unless_published is not None
            and Snapshot.objects.filter(
                pk=unless_published, status=Snapshot.Status.PUBLISHED
            ).exists()
        ):
            log.info("Snapshot %s covers this recompute; skipped", unless_published)
            return None
        # We hold the lease, so a row still "running" is a run that died.
        dead = mark_dead_runs()
        if dead:
            log.warning("%s recompute run(s) had died; marked failed", dead)
        cache.delete(PENDING_KEY)
        started_at = time.time()
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
        board_changes.settle(started_at=started_at)
        return snapshot.pk


def running_snapshot() -> Snapshot | None:
    """The snapshot row of the run in progress, if any."""
    return Snapshot.objects.filter(status=Snapshot.Status.RUNNING).order_by("-id").first()


@shared_task(
    bind=True,
    autoretry_for=(OperationalError, InterfaceError, *REDIS_ERRORS),
    retry_backoff=5,
    # Below CELERY_VISIBILITY_TIMEOUT: a longer countdown is handed out twice.
    retry_backoff_max=45,
    max_retries=5,
)
def reconcile_counts(self: Task[..., dict[str, int] | None]) -> dict[str, int] | None:
    """Nightly: check the maintained battle counts against a full count (and repair them).

    Under the recompute lease, so it never interleaves with a recompute's refresh; a
    recompute in progress puts it off by the debounce, for up to half an hour. A copy handed
    out again while a run holds the lease (the reconciliation outlived the visibility
    timeout) is dropped: that run is doing the work.
    """
    if not incremental.enabled():
        return None
    with single_flight(LOCK_NAME, timeout=settings.RECOMPUTE_LOCK_SECONDS) as mine:
        if not mine:
            if (self.request.delivery_info or {}).get("redelivered"):
                return None
            wait = max(1, settings.RECOMPUTE_DEBOUNCE_SECONDS)
            raise self.retry(countdown=wait, max_retries=1800 // wait, exc=None)
        done = incremental.reconcile()
    return {"days": len(done.days), "mismatched": done.mismatched, "rebuilt": done.full}


@shared_task(acks_late=False)
def fit_slice(run: str, slice_key: str) -> bool:
    """Help a running recompute: fit one of its slices if nobody has (leaderboard/fanout.py)."""
    return fanout.fit_slice_task(run, slice_key)
