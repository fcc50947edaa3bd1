"""Celery task: run the anomaly rules, file (or refresh) one open report per finding, and
hold the flagged votes out of the board pending review (ANOMALY_HOLD, on by default)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.db import transaction

from .anomalies import find_all
from .models import AnomalyReport
from .services import hold_report, resolve_report

log = logging.getLogger(__name__)


def file_reports() -> dict[str, int]:
    """Create or refresh open reports and hold their recent votes (ANOMALY_HOLD); exclude
    them for good instead only when ANOMALY_AUTO_EXCLUDE is on."""
    created = refreshed = excluded = held = 0
    for f in find_all():
        with transaction.atomic():
            report, was_created = AnomalyReport.objects.select_for_update().get_or_create(
                rule=f.rule,
                subject_kind=f.subject_kind,
                subject=f.subject,
                status=AnomalyReport.Status.OPEN,
                defaults={"battles": f.battles, "detail": f.detail},
            )
            if not was_created:
                report.battles, report.detail = f.battles, f.detail
                report.save(update_fields=["battles", "detail", "last_seen"])
        created += was_created
        refreshed += not was_created
        if settings.ANOMALY_AUTO_EXCLUDE:
            excluded += resolve_report(
                report=report, exclude=True, reason=f"automatic: {f.rule}", actor=None
            )
        elif settings.ANOMALY_HOLD:
            held += hold_report(report)
    log.info(
        "Anomaly reports: %d new, %d refreshed, %d battles held, %d auto-excluded",
        created,
        refreshed,
        held,
        excluded,
    )
    return {"created": created, "refreshed": refreshed, "held": held, "auto_excluded": excluded}


@shared_task
def detect_anomalies() -> dict[str, int]:
    return file_reports()
