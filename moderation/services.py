"""Moderation writes: exclude/restore battles and resolve anomaly reports — each audited.

Exclusion is a flag on the battle, never a delete; every function records who did what,
why, and the state before and after, in the same transaction as the change.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from core.audit import record, require_reason
from core.errors import ActionRefused
from ingest.models import Battle

from .models import AnomalyReport


def _state(battles: QuerySet[Battle]) -> dict:
    total = battles.count()
    excluded = battles.filter(excluded=True).count()
    return {"battles": total, "excluded": excluded, "counted": total - excluded}


def set_excluded(
    *, battles: QuerySet[Battle], exclude: bool, reason: str, actor, target: str
) -> int:
    """Exclude (or restore) the battles of `battles`. Returns how many changed state."""
    reason = require_reason(reason)
    with transaction.atomic():
        before = _state(battles)
        if exclude:
            changed = battles.filter(excluded=False).update(
                excluded=True, excluded_reason=reason[:200]
            )
        else:
            changed = battles.filter(excluded=True).update(excluded=False, excluded_reason="")
        record(
            actor=actor,
            action="exclude battles" if exclude else "restore battles",
            target=target,
            reason=reason,
            affected=changed,
            before=before,
            after=_state(battles),
        )
    return changed


def exclude_user(*, user_hash: str, reason: str, actor, restore: bool = False) -> int:
    if not Battle.objects.filter(user_hash=user_hash).exists():
        raise ActionRefused(f"No battles from pseudonymised user {user_hash!r}.")
    return set_excluded(
        battles=Battle.objects.filter(user_hash=user_hash),
        exclude=not restore,
        reason=reason,
        actor=actor,
        target=f"all battles of user {user_hash}",
    )


def exclude_time_range(
    *, start: datetime, end: datetime, reason: str, actor, restore: bool = False
) -> int:
    if end <= start:
        raise ActionRefused("The end of the range must be after its start.")
    return set_excluded(
        battles=Battle.objects.filter(received_at__gte=start, received_at__lt=end),
        exclude=not restore,
        reason=reason,
        actor=actor,
        target=f"battles received {start.isoformat()} to {end.isoformat()}",
    )


def report_battles(report: AnomalyReport) -> QuerySet[Battle]:
    """The battles an anomaly report is about."""
    if report.subject_kind == "user":
        return Battle.objects.filter(user_hash=report.subject)
    if report.subject_kind == "ip":
        qs = Battle.objects.filter(ip_hash=report.subject)
        window = report.detail.get("window")
        if window:
            qs = qs.filter(received_at__gte=window[0], received_at__lt=window[1])
        return qs
    return Battle.objects.filter(pair_id=report.subject)


def resolve_report(*, report: AnomalyReport, exclude: bool, reason: str, actor) -> int:
    """Exclude a report's battles (or dismiss it), and close it."""
    reason = require_reason(reason)
    changed = 0
    with transaction.atomic():
        if exclude:
            changed = set_excluded(
                battles=report_battles(report),
                exclude=True,
                reason=reason,
                actor=actor,
                target=f"{report.get_rule_display()}: {report.subject_kind} {report.subject}",
            )
        else:
            record(actor=actor, action="dismiss report", target=str(report), reason=reason)
        report.status = AnomalyReport.Status.EXCLUDED if exclude else AnomalyReport.Status.DISMISSED
        report.resolved_by = actor if getattr(actor, "pk", None) else None
        report.resolved_at = timezone.now()
        report.resolution = reason
        report.save()
    return changed
