"""Celery tasks of the external app: correlations after each published snapshot."""

from __future__ import annotations

from celery import shared_task

from core.task_retry import DB_RETRY

from .services import compute_correlations


@shared_task(**DB_RETRY, retry_backoff_max=300, max_retries=5)
def compute_correlations_task(snapshot_id: int | None = None) -> int:
    """Correlate a snapshot (default: the published one) with every active external board."""
    # Concurrent runs for one snapshot serialise on a row lock of the snapshot (services).
    return compute_correlations(snapshot_id=snapshot_id)
