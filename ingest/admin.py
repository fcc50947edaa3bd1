"""Admin for ingest: battles (exclude/restore with a reason), completion logs, API clients."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from moderation.admin_tools import AuditedAdmin, reason_action
from moderation.services import (
    ModerationError,
    exclude_time_range,
    exclude_user,
    record,
    set_excluded,
)

from .auth import hash_key, new_key
from .models import ApiClient, Battle, CompletionLog, SingleOutcome
from .services import revoke_api_key


class _ModerationForm(forms.Form):
    mode = forms.ChoiceField(
        choices=[("exclude", "Exclude"), ("restore", "Restore")],
        widget=forms.RadioSelect,
        initial="exclude",
    )
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 60}), max_length=2000)


class UserModerationForm(_ModerationForm):
    user_hash = forms.RegexField(
        regex=r"^[0-9a-f]{64}$",
        label="Pseudonymised user id",
        error_messages={"invalid": "A pseudonymised id is 64 hexadecimal characters."},
    )


class RangeModerationForm(_ModerationForm):
    start = forms.DateTimeField(help_text="UTC, e.g. 2026-11-01 00:00")
    end = forms.DateTimeField(help_text="UTC, exclusive")


@admin.register(Battle)
class BattleAdmin(admin.ModelAdmin):
    list_display = (
        "pair_id",
        "model_a",
        "model_b",
        "outcome",
        "kind",
        "language",
        "task_type",
        "privacy",
        "source",
        "received_at",
        "excluded",
        "excluded_reason",
    )
    list_filter = (
        "excluded",
        "kind",
        "outcome",
        "source",
        "privacy",
        "language",
        "task_type",
        "context_bucket",
        "model_a",
    )
    search_fields = ("=pair_id", "=user_hash", "=ip_hash")
    date_hierarchy = "received_at"
    list_select_related = ("model_a", "model_b")
    show_full_result_count = False
    actions = ["exclude_battles", "restore_battles"]
    change_list_template = "admin/ingest/battle/change_list.html"

    def lookup_allowed(self, lookup, value, request=None) -> bool:
        # Links from anomaly reports filter by these exact pseudonymised ids.
        return lookup in ("user_hash", "ip_hash") or super().lookup_allowed(lookup, value, request)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def has_moderate_permission(self, request) -> bool:
        return request.user.has_perm("ingest.moderate_battle")

    def _set(self, request, queryset, *, exclude: bool):
        verb = "Exclude" if exclude else "Restore"
        return reason_action(
            self,
            request,
            queryset,
            title=f"{verb} battles",
            apply=lambda qs, reason: set_excluded(
                battles=qs,
                exclude=exclude,
                reason=reason,
                actor=request.user,
                target=f"{qs.count()} selected battle(s)",
            ),
            done=f"{verb}d {{n}} battle(s). They {'leave' if exclude else 'return to'} the board at the next recompute.",
        )

    @admin.action(description="Exclude selected battles (with a reason)", permissions=["moderate"])
    def exclude_battles(self, request, queryset):
        return self._set(request, queryset, exclude=True)

    @admin.action(description="Restore selected battles (with a reason)", permissions=["moderate"])
    def restore_battles(self, request, queryset):
        return self._set(request, queryset, exclude=False)

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("moderate-user/", view(self.moderate_user), name="ingest_battle_moderate_user"),
            path("moderate-range/", view(self.moderate_range), name="ingest_battle_moderate_range"),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        extra = {"can_moderate": self.has_moderate_permission(request)}
        return super().changelist_view(request, {**(extra_context or {}), **extra})

    def _moderation_form(self, request, form_class, title, intro, apply):
        if not self.has_moderate_permission(request):
            raise PermissionDenied
        form = form_class(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                n = apply(form.cleaned_data)
            except ModerationError as exc:
                form.add_error(None, str(exc))
            else:
                self.message_user(
                    request,
                    f"{n} battle(s) changed; the board follows at the next recompute.",
                    messages.SUCCESS,
                )
                return redirect(reverse("admin:ingest_battle_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "title": title,
            "intro": intro,
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "moderation/form.html", context)

    def moderate_user(self, request):
        return self._moderation_form(
            request,
            UserModerationForm,
            "Exclude or restore all battles of a user",
            "Users are known only by their pseudonymised id (shown on battles and anomaly reports).",
            lambda d: exclude_user(
                user_hash=d["user_hash"],
                reason=d["reason"],
                actor=request.user,
                restore=d["mode"] == "restore",
            ),
        )

    def moderate_range(self, request):
        return self._moderation_form(
            request,
            RangeModerationForm,
            "Exclude or restore all battles in a time range",
            "Every battle received in [start, end) changes state.",
            lambda d: exclude_time_range(
                start=d["start"],
                end=d["end"],
                reason=d["reason"],
                actor=request.user,
                restore=d["mode"] == "restore",
            ),
        )


@admin.register(CompletionLog)
class CompletionLogAdmin(admin.ModelAdmin):
    list_display = (
        "completion_id",
        "model",
        "latency_ms",
        "pair_index",
        "served_by_us",
        "succeeded",
        "received_at",
    )
    list_filter = ("served_by_us", "succeeded", "model")
    search_fields = ("completion_id", "pair_id")
    show_full_result_count = False

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(SingleOutcome)
class SingleOutcomeAdmin(CompletionLogAdmin):
    list_display = ("completion_id", "model", "privacy", "received_at")
    list_filter = ("model",)
    search_fields = ("completion_id",)


@admin.register(ApiClient)
class ApiClientAdmin(AuditedAdmin):
    list_display = (
        "name",
        "key_prefix",
        "active",
        "rate_limit_per_minute",
        "last_used_at",
        "request_count",
        "votes",
    )
    list_filter = ("revoked_at",)
    search_fields = ("name", "key_prefix")
    actions = ["revoke"]

    def get_fields(self, request, obj=None):
        if obj is None:
            return ("name", "rate_limit_per_minute", "audit_reason")
        return (
            "name",
            "rate_limit_per_minute",
            "audit_reason",
            "key_prefix",
            "created_at",
            "created_by",
            "revoked_at",
            "last_used_at",
            "request_count",
        )

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        return (
            "key_prefix",
            "created_at",
            "created_by",
            "revoked_at",
            "last_used_at",
            "request_count",
        )

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # revoke instead: the votes keep their client

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_votes=Count("battle"))

    @admin.display(description="votes", ordering="n_votes")
    def votes(self, obj) -> int:
        return obj.n_votes

    @admin.display(boolean=True)
    def active(self, obj) -> bool:
        return obj.is_active

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        key, prefix = new_key()
        obj.key_prefix, obj.key_hash, obj.created_by = prefix, hash_key(key), request.user
        super().save_model(request, obj, form, change)
        messages.warning(
            request,
            f"API key for “{obj.name}”: {key} — copy it now. Only its hash is stored; "
            "it cannot be shown again.",
        )

    @admin.action(description="Revoke selected API keys (with a reason)", permissions=["change"])
    def revoke(self, request, queryset):
        def apply(qs, reason):
            n = 0
            for client in qs.filter(revoked_at__isnull=True):
                revoke_api_key(client=client)
                record(
                    actor=request.user,
                    action="revoke api key",
                    target=str(client),
                    reason=reason,
                    before={"revoked": False},
                    after={"revoked": True},
                )
                n += 1
            return n

        return reason_action(
            self,
            request,
            queryset,
            title="Revoke API keys",
            apply=apply,
            done="Revoked {n} key(s).",
        )
