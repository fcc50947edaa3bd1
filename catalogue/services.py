"""Writes of the catalogue: the demo models, and merging a duplicate key into another model (audited)."""

from __future__ import annotations

from django.db import transaction

from core.audit import Actor, record, require_reason
from core.errors import ActionRefused
from core.models import AuditEntry

from .demo import DEMO_MODELS
from .models import ArenaModel, Visibility
from .selectors import clear_catalogue_cache, resolve_model_key


def seed_demo_catalogue() -> int:
    """Create the demo models that are missing; never changes existing ones. Returns how many."""
    created = 0
    for m in DEMO_MODELS:
        _, was_created = ArenaModel.objects.get_or_create(
            key=m.key,
            defaults={
                "display_name": m.display_name,
                "organization": m.organization,
                "license": m.license,
                "style": m.style,
            },
        )
        created += was_created
    return created


def merge_model(*, source: ArenaModel, target: ArenaModel, reason: str, actor: Actor) -> None:
    """Make `source` an alias of `target`: its votes count for `target` from the next recompute.

    The audit entry's `affected` is the number of keys whose votes now count for `target`
    (`source` and any keys already merged into it).
    """
    reason = require_reason(reason)
    if source.pk == target.pk:
        raise ActionRefused("A model cannot be merged into itself.")
    if target.merged_into_id is not None:
        raise ActionRefused(
            f"{target.key} is itself merged into another model; merge into that one."
        )
    if source.merged_into_id is not None:
        raise ActionRefused(f"{source.key} is already merged into another model; unmerge it first.")
    with transaction.atomic():
        before = {"merged_into": None, "visibility": source.visibility}
        repointed = ArenaModel.objects.filter(merged_into=source).update(merged_into=target)
        source.merged_into = target
        source.visibility = Visibility.HIDDEN
        source.save(update_fields=["merged_into", "visibility", "updated_at"])
        record(
            actor=actor,
            action="merge model",
            target=f"{source.key} → {target.key}",
            reason=reason,
            affected=1 + repointed,
            before=before,
            after={"merged_into": target.key, "visibility": source.visibility},
        )
    clear_catalogue_cache()


def unmerge_model(*, source: ArenaModel, reason: str, actor: Actor) -> None:
    """Undo a merge: the model's votes count for it again, with its visibility from before."""
    reason = require_reason(reason)
    target = source.merged_into
    if target is None:
        raise ActionRefused(f"{source.key} is not merged into another model.")
    last = AuditEntry.objects.filter(
        action="merge model", target__startswith=f"{source.key} → "
    ).first()
    visibility = (
        (last.before or {}).get("visibility", Visibility.HIDDEN) if last else Visibility.HIDDEN
    )
    with transaction.atomic():
        before = {"merged_into": target.key, "visibility": source.visibility}
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


def add_models(*, keys: list[str], reason: str) -> list[str]:
    """Create catalogue models for keys nothing resolves (named after their key, default
    visibility), each with an audit entry; returns the keys created. Invalid keys are skipped."""
    from django.core.exceptions import ValidationError

    created = []
    for key in keys:
        if resolve_model_key(key) is not None:
            continue
        model = ArenaModel(key=key, display_name=key)
        try:
            model.full_clean()
        except ValidationError:
            continue
        with transaction.atomic():
            model.save()
            record(
                actor=None,
                action="add_model",
                target=key,
                reason=reason,
                after={"key": key, "visibility": model.visibility},
            )
        created.append(key)
    return created
