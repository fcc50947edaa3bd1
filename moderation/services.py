"""Moderation writes: hold, release, exclude and restore battles, resolve anomaly reports.

Three states of a battle: counted; held out of the board pending a decision (`hold` set,
and excluded so that every count leaves it out); excluded for good. Nothing is deleted.
Every function records who did what, why, and the state before and after, in the same
transaction as the change (an automatic hold is recorded as done by "system").
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Q, QuerySet
from django.utils import timezone

from core.audit import Actor, record, require_reason
from core.errors import ActionRefused
from ingest.models import Battle, Hold

from .models import AnomalyReport


def _state(battles: QuerySet[Battle]) -> dict[str, int]:
    total = battles.count()
    excluded = battles.filter(excluded=True).count()
    held = battles.exclude(hold="").count()
    return {
        "battles": total,
        "excluded": excluded - held,
        "held": held,
        "counted": total - excluded,
    }


def _move(
    *,
    battles: QuerySet[Battle],
    chosen: QuerySet[Battle],
    fields: dict[str, object],
    action: str,
    reason: str,
    actor: Actor,
    target: str,
    record_none: bool = True,
) -> int:
    """Update `chosen` (a subset of `battles`) to `fields` in one transaction, recording the
    counts of `battles` before and after in the audit log. Returns how many changed."""
    with transaction.atomic():
        before = _state(battles)
        changed = chosen.update(**fields)
        if changed or record_none:
            record(
                actor=actor,
                action=action,
                target=target,
                reason=reason,
                affected=changed,
                before=before,
                after=_state(battles),
            )
    return changed


def set_excluded(
    *, battles: QuerySet[Battle], exclude: bool, reason: str, actor: Actor, target: str
) -> int:
    """Exclude (or restore) the battles of `battles`. Returns how many changed state.

    Excluding turns held battles into excluded ones; restoring counts held ones again too."""
    reason = require_reason(reason)
    if exclude:
        chosen = battles.filter(Q(excluded=False) | ~Q(hold=""))
        fields: dict[str, object] = {"excluded": True, "hold": "", "excluded_reason": reason[:200]}
    else:
        chosen = battles.filter(excluded=True)
        fields = {"excluded": False, "hold": "", "excluded_reason": ""}
    action = "exclude battles" if exclude else "restore battles"
    return _move(battles=battles, chosen=chosen, fields=fields, action=action, reason=reason,
                 actor=actor, target=target)  # fmt: skip


def hold_battles(*, battles: QuerySet[Battle], reason: str, actor: Actor, target: str) -> int:
    """Hold the counted battles of `battles` out of the board pending review."""
    reason = require_reason(reason)
    fields = {"excluded": True, "hold": Hold.QUARANTINE, "excluded_reason": f"held: {reason}"[:200]}
    return _move(battles=battles, chosen=battles.filter(excluded=False), fields=fields,
                 action="hold battles", reason=reason, actor=actor, target=target,
                 record_none=False)  # fmt: skip


def release_battles(*, battles: QuerySet[Battle], reason: str, actor: Actor, target: str) -> int:
    """Count the held battles of `battles` again (flagged or unverified alike)."""
    reason = require_reason(reason)
    fields = {"excluded": False, "hold": "", "excluded_reason": ""}
    return _move(battles=battles, chosen=battles.exclude(hold=""), fields=fields,
                 action="release battles", reason=reason, actor=actor, target=target)  # fmt: skip


def exclude_user(*, user_hash: str, reason: str, actor: Actor, restore: bool = False) -> int:
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
    *, start: datetime, end: datetime, reason: str, actor: Actor, restore: bool = False
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


def _target(report: AnomalyReport) -> str:
    return f"{report.get_rule_display()}: {report.subject_kind} {report.subject}"


def hold_report(report: AnomalyReport) -> int:
    """Hold a report's recent counted battles (the detection window's) out of the board.

    Votes a moderator already released for this subject (a dismissed report) are not held
    again; votes that came after the release are."""
    since = timezone.now() - timedelta(days=settings.ANOMALY_WINDOW_DAYS)
    released = AnomalyReport.objects.filter(
        subject_kind=report.subject_kind,
        subject=report.subject,
        status=AnomalyReport.Status.DISMISSED,
    ).aggregate(at=Max("resolved_at"))["at"]
    if released is not None and released > since:
        since = released
    with transaction.atomic():
        changed = hold_battles(
            battles=report_battles(report).filter(received_at__gte=since),
            reason=f"automatic: {report.rule}",
            actor=None,
            target=_target(report),
        )
        if changed:
            AnomalyReport.objects.filter(pk=report.pk).update(held=report.held + changed)
            report.held += changed
    return changed


def resolve_report(*, report: AnomalyReport, exclude: bool, reason: str, actor: Actor) -> int:
    """Exclude a report's battles (held ones included), or dismiss it and release the votes
    it held; either way close it. Returns the battles that changed state."""
    reason = require_reason(reason)
    with transaction.atomic():
        if exclude:
            changed = set_excluded(
                battles=report_battles(report),
                exclude=True,
                reason=reason,
                actor=actor,
                target=_target(report),
            )
        else:
            changed = release_battles(
                battles=report_battles(report).filter(hold=Hold.QUARANTINE),
                reason=reason,
                actor=actor,
                target=_target(report),
            )
            record(actor=actor, action="dismiss report", target=str(report), reason=reason)
        report.status = AnomalyReport.Status.EXCLUDED if exclude else AnomalyReport.Status.DISMISSED
        report.resolved_by_id = actor.pk if actor is not None and actor.pk else None
        report.resolved_at = timezone.now()
        report.resolution = reason
        report.held = 0
        report.save()
    return changed
