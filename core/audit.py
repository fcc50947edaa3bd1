"""The audit trail of staff actions: `record`, and admin building blocks that always ask why.

`record` writes one audit entry (who, when, what, why, before/after); callers run it in the
transaction of the change it describes. `AuditedAdmin` adds a required "Reason" field to add/change forms and records every save,
inline change and delete in the audit log with the changed fields before and after.
`reason_action` turns a bulk action into a two-step one: pick rows, then give a reason.
"""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import Model, QuerySet
from django.template.response import TemplateResponse

from .errors import ActionRefused
from .models import AuditEntry


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


def require_reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ActionRefused("A reason is required for every moderation action.")
    return reason


SKIP_FIELDS = {"created_at", "updated_at", "last_used_at", "request_count", "key_hash"}


class ReasonForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        max_length=2000,
        help_text="Recorded in the audit log with your name and the time.",
    )


class AuditedModelForm(forms.ModelForm):
    audit_reason = forms.CharField(
        label="Reason for this change",
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text="Required. Recorded in the audit log with the fields before and after.",
    )


def snapshot(obj: Model) -> dict:
    out = {}
    for f in obj._meta.concrete_fields:
        if f.primary_key or f.name in SKIP_FIELDS:
            continue
        value = f.value_from_object(obj)
        out[f.name] = DjangoJSONEncoder().default(value) if hasattr(value, "isoformat") else value
    return out


def diff(before: dict, after: dict) -> tuple[dict, dict]:
    keys = [k for k in after if before.get(k) != after.get(k)]
    return {k: before.get(k) for k in keys}, {k: after.get(k) for k in keys}


class AuditedAdmin(admin.ModelAdmin):
    form = AuditedModelForm

    def save_model(self, request, obj, form, change):
        before = snapshot(type(obj).objects.get(pk=obj.pk)) if change and obj.pk else {}
        super().save_model(request, obj, form, change)
        b, a = diff(before, snapshot(obj))
        record(
            actor=request.user,
            action=f"{'change' if change else 'add'} {obj._meta.verbose_name}",
            target=str(obj),
            reason=form.cleaned_data.get("audit_reason", ""),
            before=b,
            after=a,
        )

    def save_formset(self, request, form, formset, change):
        super().save_formset(request, form, formset, change)
        reason = form.cleaned_data.get("audit_reason", "")
        for obj in formset.new_objects:
            record(
                actor=request.user,
                action=f"add {obj._meta.verbose_name}",
                target=str(obj),
                reason=reason,
                after=snapshot(obj),
            )
        for obj, fields in formset.changed_objects:
            record(
                actor=request.user,
                action=f"change {obj._meta.verbose_name}",
                target=str(obj),
                reason=reason,
                after={k: snapshot(obj).get(k) for k in fields},
            )
        for obj in formset.deleted_objects:
            record(
                actor=request.user,
                action=f"delete {obj._meta.verbose_name}",
                target=str(obj),
                reason=reason,
                before=snapshot(obj),
            )

    def delete_model(self, request, obj):
        record(
            actor=request.user,
            action=f"delete {obj._meta.verbose_name}",
            target=str(obj),
            before=snapshot(obj),
        )
        super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):
        for obj in queryset:
            record(
                actor=request.user,
                action=f"delete {obj._meta.verbose_name}",
                target=str(obj),
                before=snapshot(obj),
            )
        super().delete_queryset(request, queryset)


def reason_action(
    modeladmin: admin.ModelAdmin,
    request,
    queryset: QuerySet,
    *,
    title: str,
    apply: Callable[[QuerySet, str], int],
    done: str,
):
    """Run `apply(queryset, reason)` after asking for a reason on an intermediate page."""
    if request.POST.get("apply"):
        form = ReasonForm(request.POST)
        if form.is_valid():
            try:
                n = apply(queryset, form.cleaned_data["reason"])
            except ActionRefused as exc:
                modeladmin.message_user(request, str(exc), messages.ERROR)
                return None
            modeladmin.message_user(request, done.format(n=n), messages.SUCCESS)
            return None
    else:
        form = ReasonForm()
    return TemplateResponse(
        request,
        "moderation/action_reason.html",
        {
            **modeladmin.admin_site.each_context(request),
            "title": title,
            "opts": modeladmin.model._meta,
            "form": form,
            "count": queryset.count(),
            "action": request.POST.get("action"),
            "select_across": request.POST.get("select_across", "0"),
            "selected": request.POST.getlist(ACTION_CHECKBOX_NAME),
            "checkbox_name": ACTION_CHECKBOX_NAME,
            "index_name": request.POST.get("index", "0"),
        },
    )
