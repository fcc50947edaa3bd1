"""Celery task: build a release the admin started (a large release takes minutes)."""

from __future__ import annotations

from celery import shared_task

from .services import build_release


@shared_task
def build_release_task(release_id: int) -> int:
    """Write and store release `release_id`; returns its number of battles."""
    return int(build_release(release_id=release_id).counts["battles"])
