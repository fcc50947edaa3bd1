"""Admin for ingest: battles (read-only data), completion logs and API clients."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Count
from django.utils import timezone

from .auth import hash_key, new_key
from .models import ApiClient, Battle, CompletionLog, SingleOutcome


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
    )
    list_filter = (
        "kind",
        "outcome",
        "source",
        "privacy",
        "excluded",
        "language",
        "task_type",
        "context_bucket",
    )
    search_fields = ("pair_id", "user_hash")
    date_hierarchy = "received_at"
    list_select_related = ("model_a", "model_b")
    show_full_result_count = False

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


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
class ApiClientAdmin(admin.ModelAdmin):
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
            return ("name", "rate_limit_per_minute")
        return (
            "name",
            "rate_limit_per_minute",
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

    @admin.action(description="Revoke selected API keys")
    def revoke(self, request, queryset):
        n = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {n} key(s).")
