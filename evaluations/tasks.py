"""Celery tasks of the evaluations app: drive a run; resume runs whose driver died.

``run_evaluation`` is long (a whole run, its items on threads); many of them may run at
once on several workers, the per-provider semaphore keeping each provider within its
limit. A worker that starts (``worker_ready``) schedules ``resume_evaluations`` one lease
later, when the heartbeats of drivers killed with the previous worker have gone stale;
the beat schedule runs it periodically too.
"""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from core.task_retry import DB_RETRY

from .driver import drive
from .services import resume_stalled

log = logging.getLogger(__name__)


@shared_task(**DB_RETRY, retry_backoff_max=120, max_retries=5)
def run_evaluation(run_id: int) -> str | None:
    """Work off the run's remaining items; returns its status afterwards."""
    return drive(run_id)


@shared_task(**DB_RETRY, max_retries=3)
def resume_evaluations() -> list[int]:
    """Queue a driver for each run whose heartbeat is older than a lease."""
    return resume_stalled()


@worker_ready.connect
def _resume_after_start(**_kwargs: object) -> None:
    try:
        resume_evaluations.apply_async(countdown=float(settings.EVALUATION_LEASE_SECONDS) + 1.0)
    except Exception:  # the beat schedule does it later
        log.exception("Could not schedule the evaluations' resume")
