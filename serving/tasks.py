"""Celery task of pair serving: refit the latency distribution (beat-scheduled)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import InterfaceError, OperationalError

from .fitting import fit_pair_distribution

log = logging.getLogger(__name__)


@shared_task(
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=5,
    retry_backoff_max=120,
    max_retries=3,
)
def fit_latencies() -> int:
    """Fit every served model's latency from recent completions; returns the new fit's id.

    Web processes pick the new fit up within SERVING_STATE_SECONDS.
    """
    row = fit_pair_distribution()
    log.info(
        "Latency fit %s: %d models, %d latencies, median wait %s s (uniform %s s)",
        row.pk,
        len(row.fits),
        row.samples,
        f"{row.median_wait_s:.3f}" if row.median_wait_s is not None else "-",
        f"{row.uniform_median_wait_s:.3f}" if row.uniform_median_wait_s is not None else "-",
    )
    return row.pk
