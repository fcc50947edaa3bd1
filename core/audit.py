"""The audit trail of staff actions: `record`, and admin building blocks that always ask why.

`record` writes one audit entry (who, when, what, why, before/after); callers run it in the
transaction of the change it describes. `AuditedAdmin` adds a required "Reason" field to add/change forms and records every save,
inline change and delete in the audit log with the changed fields before and after.
`reason_action` turns a bulk action into a two-step one: pick rows, then give a reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import Model, QuerySet
from django.forms import BaseModelFormSet
from django.http import HttpRequest
from django.template.response import TemplateResponse

from .errors import ActionRefused
from .models import AuditEntry

# Who did it: a staff member, or nobody (None: the system, e.g. an automatic rule).
Actor = AbstractBaseUser | AnonymousUser | None
Fields = dict[str, Any]
_M = TypeVar("_M", bound=Model)


def record(
    *,
    actor: Actor,
    action: str,
    target: str,
    reason: str = "",
    affected: int = 0,
    before: Fields | None = None,
    after: Fields | None = None,
) -> AuditEntry:
    return AuditEntry.objects.create(
        actor_id=(actor.pk or None) if actor is not None else None,
        actor_name=actor.get_username() if actor is not None else "system",
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


class AuditedModelForm(forms.ModelForm[Any]):
    audit_reason = forms.CharField(
        label="Reason for this change",
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text="Required. Recorded in the audit log with the fields before and after.",
    )


def snapshot(obj: Model) -> Fields:
    out: Fields = {}
    for f in obj._meta.concrete_fields:
        if f.primary_key or f.name in SKIP_FIELDS:
            continue
        value = f.value_from_object(obj)
        out[f.name] = DjangoJSONEncoder().default(value) if hasattr(value, "isoformat") else value
    return out


def diff(before: Fields, after: Fields) -> tuple[Fields, Fields]:
    keys = [k for k in after if before.get(k) != after.get(k)]
    return {k: before.get(k) for k in keys}, {k: after.get(k) for k in keys}


class AuditedAdmin(admin.ModelAdmin[_M]):
    form = AuditedModelForm

    def save_model(self, request: HttpRequest, obj: _M, form: Any, change: bool) -> None:
        before = snapshot(type(obj)._default_manager.get(pk=obj.pk)) if change and obj.pk else {}
        super().save_model(request, obj, form, change)
        b, a = diff(before, snapshot(obj))
        reason = form.cleaned_data.get("audit_reason", "")
        _record_row(request, "change" if change else "add", obj, reason=reason, before=b, after=a)

    def save_formset(
        self, request: HttpRequest, form: Any, formset: BaseModelFormSet[Any, Any], change: bool
    ) -> None:
        super().save_formset(request, form, formset, change)
        reason = form.cleaned_data.get("audit_reason", "")
        changes: list[tuple[str, Model, Fields | None, Fields | None]] = [
            *(("add", obj, None, snapshot(obj)) for obj in formset.new_objects),
            *(
                ("change", obj, None, {k: snapshot(obj).get(k) for k in fields})
                for obj, fields in formset.changed_objects
            ),
            *(("delete", obj, snapshot(obj), None) for obj in formset.deleted_objects),
        ]
        for verb, obj, before, after in changes:
            _record_row(request, verb, obj, reason=reason, before=before, after=after)

    def delete_model(self, request: HttpRequest, obj: _M) -> None:
        _record_row(request, "delete", obj, before=snapshot(obj))
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[_M]) -> None:
        for obj in queryset:
            _record_row(request, "delete", obj, before=snapshot(obj))
        super().delete_queryset(request, queryset)


def _record_row(
    request: HttpRequest,
    verb: str,
    obj: Model,
    *,
    reason: str = "",
    before: Fields | None = None,
    after: Fields | None = None,
) -> None:
    """The audit entry of one row the admin added, changed or deleted."""
    record(
        actor=request.user,
        action=f"{verb} {obj._meta.verbose_name}",
        target=str(obj),
        reason=reason,
        before=before,
        after=after,
    )


class CountedReasonForm(ReasonForm):
    """A reason, and the number of rows typed out: a large selection is never one click."""

    count = forms.IntegerField(
        label="Type the number of rows this changes",
        help_text="Shown above. A dropped filter plus “select all” would otherwise change "
        "the whole table in one confirmation.",
    )

    def __init__(self, *args: Any, expected: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.expected = expected

    def clean_count(self) -> int:
        count: int = self.cleaned_data["count"]
        if count != self.expected:
            raise forms.ValidationError(
                f"This selection has {self.expected:,} rows; type that number to go on."
            )
        return count


def reason_action(
    modeladmin: admin.ModelAdmin[_M],
    request: HttpRequest,
    queryset: QuerySet[_M],
    *,
    title: str,
    apply: Callable[[QuerySet[_M], str], int],
    done: str,
    confirm_over: int | None = None,
) -> TemplateResponse | None:
    """Run `apply(queryset, reason)` after asking for a reason on an intermediate page; over
    `confirm_over` rows, also for the row count typed out."""
    count = queryset.count()

    def make_form(data: Any = None) -> ReasonForm:
        if confirm_over is not None and count > confirm_over:
            return CountedReasonForm(data, expected=count)
        return ReasonForm(data)

    if request.POST.get("apply"):
        form = make_form(request.POST)
        if form.is_valid():
            try:
                n = apply(queryset, form.cleaned_data["reason"])
            except ActionRefused as exc:
                modeladmin.message_user(request, str(exc), messages.ERROR)
                return None
            modeladmin.message_user(request, done.format(n=n), messages.SUCCESS)
            return None
    else:
        form = make_form()
    return TemplateResponse(
        request,
        "moderation/action_reason.html",
        {
            **modeladmin.admin_site.each_context(request),
            "title": title,
            "opts": modeladmin.model._meta,
            "form": form,
            "count": count,
            "action": request.POST.get("action"),
            "select_across": request.POST.get("select_across", "0"),
            "selected": request.POST.getlist(ACTION_CHECKBOX_NAME),
            "checkbox_name": ACTION_CHECKBOX_NAME,
            "index_name": request.POST.get("index", "0"),
        },
    )
