"""Moderation writes: exclude/restore battles, merge models, resolve reports — each audited.

Exclusion is a flag on the battle, never a delete; every function records who did what,
why, and the state before and after, in the same transaction as the change.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from ingest.models import Battle
from leaderboard.models import ArenaModel, Visibility
from leaderboard.selectors import clear_catalogue_cache

from .models import AnomalyReport, AuditEntry


class ModerationError(ValueError):
    """A moderation request that cannot be carried out as asked (message says why)."""


def record(
    *,
    actor,
    action: str,
    target: str,
    reason: str = "",
    affected: int = 0,
    before: dict | None = None,
    after: dict | None = None,
) -> AuditEntry:
    return AuditEntry.objects.create(
        actor=actor if getattr(actor, "pk", None) else None,
        actor_name=getattr(actor, "get_username", lambda: "system")() if actor else "system",
        action=action,
        target=target[:300],
        reason=reason,
        affected=affected,
        before=before or {},
        after=after or {},
    )


def _require_reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ModerationError("A reason is required for every moderation action.")
    return reason


def _state(battles: QuerySet[Battle]) -> dict:
    total = battles.count()
    excluded = battles.filter(excluded=True).count()
    return {"battles": total, "excluded": excluded, "counted": total - excluded}


def set_excluded(
    *, battles: QuerySet[Battle], exclude: bool, reason: str, actor, target: str
) -> int:
    """Exclude (or restore) the battles of `battles`. Returns how many changed state."""
    reason = _require_reason(reason)
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
        raise ModerationError(f"No battles from pseudonymised user {user_hash!r}.")
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
        raise ModerationError("The end of the range must be after its start.")
    return set_excluded(
        battles=Battle.objects.filter(received_at__gte=start, received_at__lt=end),
        exclude=not restore,
        reason=reason,
        actor=actor,
        target=f"battles received {start.isoformat()} to {end.isoformat()}",
    )


def merge_model(*, source: ArenaModel, target: ArenaModel, reason: str, actor) -> None:
    """Make `source` an alias of `target`: its votes count for `target` from the next recompute."""
    reason = _require_reason(reason)
    if source.pk == target.pk:
        raise ModerationError("A model cannot be merged into itself.")
    if target.merged_into_id is not None:
        raise ModerationError(
            f"{target.key} is itself merged into another model; merge into that one."
        )
    if source.merged_into_id is not None:
        raise ModerationError(
            f"{source.key} is already merged into another model; unmerge it first."
        )
    with transaction.atomic():
        before = {"merged_into": None, "visibility": source.visibility}
        ArenaModel.objects.filter(merged_into=source).update(merged_into=target)
        source.merged_into = target
        source.visibility = Visibility.HIDDEN
        source.save(update_fields=["merged_into", "visibility", "updated_at"])
        record(
            actor=actor,
            action="merge model",
            target=f"{source.key} → {target.key}",
            reason=reason,
            affected=Battle.objects.filter(model_a=source).count()
            + Battle.objects.filter(model_b=source).count(),
            before=before,
            after={"merged_into": target.key, "visibility": source.visibility},
        )
    clear_catalogue_cache()


def unmerge_model(*, source: ArenaModel, reason: str, actor) -> None:
    """Undo a merge: the model's votes count for it again, with its visibility from before."""
    reason = _require_reason(reason)
    if source.merged_into_id is None:
        raise ModerationError(f"{source.key} is not merged into another model.")
    last = AuditEntry.objects.filter(
        action="merge model", target__startswith=f"{source.key} → "
    ).first()
    visibility = (
        (last.before or {}).get("visibility", Visibility.HIDDEN) if last else Visibility.HIDDEN
    )
    with transaction.atomic():
        before = {"merged_into": source.merged_into.key, "visibility": source.visibility}
        source.merged_into = None
        source.visibility = visibility
        source.save(update_fields=["merged_into", "visibility", "updated_at"])
        record(
            actor=actor,
            action="unmerge model",
            target=source.key,
            reason=reason,
            before=before,
            after={"merged_into": None, "visibility": visibility},
        )
    clear_catalogue_cache()


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
    reason = _require_reason(reason)
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
