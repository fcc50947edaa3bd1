"""Admin for API clients (issued once, revoked with a reason) and the audit log (read-only, CSV)."""

from __future__ import annotations

import csv
import json

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import HttpResponse
from django.urls import path, reverse

from .admin_base import ReadOnlyAdmin
from .audit import AuditedAdmin, reason_action, record
from .auth import hash_key, new_key
from .csv_cells import safe_row
from .models import ApiClient, AuditEntry
from .services import revoke_api_key

CSV_COLUMNS = ("at", "actor_name", "action", "target", "reason", "affected", "before", "after")


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


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    list_display = ("at", "actor_name", "action", "target", "affected", "reason")
    list_filter = ("action", "actor_name")
    search_fields = ("target", "reason", "actor_name")
    date_hierarchy = "at"
    readonly_fields = [f.name for f in AuditEntry._meta.fields]

    def get_urls(self):
        export = self.admin_site.admin_view(self.export_csv)
        return [
            path("export.csv", export, name="core_auditentry_export"),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        extra = {
            "export_url": reverse("admin:core_auditentry_export") + "?" + request.GET.urlencode()
        }
        return super().changelist_view(request, {**(extra_context or {}), **extra})

    def export_csv(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        cl = self.get_changelist_instance(request)
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="audit-log.csv"'
        writer = csv.writer(response)
        writer.writerow(CSV_COLUMNS)
        for e in cl.get_queryset(request).order_by("at", "id"):
            writer.writerow(
                safe_row(
                    [
                        e.at.isoformat(),
                        e.actor_name,
                        e.action,
                        e.target,
                        e.reason,
                        e.affected,
                        json.dumps(e.before, sort_keys=True),
                        json.dumps(e.after, sort_keys=True),
                    ]
                )
            )
        return response
