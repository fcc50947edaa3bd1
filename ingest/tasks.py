"""Celery tasks of ingest: the back-fill of slice labels after the labeller changed."""

from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any

from celery import shared_task

from core.locks import single_flight
from core.task_retry import DB_RETRY

from .relabel import relabel_stale_battles
from .triggers import recompute_task

log = logging.getLogger(__name__)
RELABEL_LOCK_SECONDS = 6 * 3600


@shared_task(**DB_RETRY, retry_backoff_max=300, max_retries=5)
def relabel_battles(chunk_size: int = 500, recompute: bool = True) -> dict[str, Any] | None:
    """Relabel battles whose labeler_version is stale (see ingest.relabel), in chunks.

    Returns the report as a dict, or None when another run holds the lock. When any label
    value changed, a leaderboard recompute is queued so the slices reflect the new labels.
    """
    # Chunks commit one by one, so a retried or concurrent run would only redo work; the
    # lock keeps two runs from racing over the same rows.
    with single_flight("relabel", timeout=RELABEL_LOCK_SECONDS) as mine:
        if not mine:
            log.info("Relabel already running; this run is skipped")
            return None
        report = relabel_stale_battles(chunk_size=chunk_size)
    log.info(
        "Relabelled %s battle(s) (%s from code, %s from file type only), %s changed, %.1f s",
        report.examined,
        report.from_code,
        report.from_file_type,
        report.changed,
        report.seconds,
    )
    if recompute and report.changed:
        recompute_task().delay(trigger="relabel")
    return asdict(report)
