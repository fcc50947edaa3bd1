"""Admin for the audit log (read-only, CSV export) and anomaly reports (exclude or dismiss)."""

from __future__ import annotations

import csv
import json

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.urls import path, reverse
from django.utils.html import format_html

from .admin_tools import reason_action
from .models import AnomalyReport, AuditEntry
from .services import resolve_report

CSV_COLUMNS = ("at", "actor_name", "action", "target", "reason", "affected", "before", "after")


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    list_display = ("at", "actor_name", "action", "target", "affected", "reason")
    list_filter = ("action", "actor_name")
    search_fields = ("target", "reason", "actor_name")
    date_hierarchy = "at"
    readonly_fields = [f.name for f in AuditEntry._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def get_urls(self):
        export = self.admin_site.admin_view(self.export_csv)
        return [
            path("export.csv", export, name="moderation_auditentry_export"),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        extra = {
            "export_url": reverse("admin:moderation_auditentry_export")
            + "?"
            + request.GET.urlencode()
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
        return response


@admin.register(AnomalyReport)
class AnomalyReportAdmin(admin.ModelAdmin):
    list_display = (
        "rule",
        "subject_kind",
        "short_subject",
        "battles",
        "figures",
        "status",
        "last_seen",
        "resolved_by",
    )
    list_filter = ("status", "rule", "subject_kind")
    search_fields = ("subject",)
    readonly_fields = [f.name for f in AnomalyReport._meta.fields]
    actions = ["exclude_battles", "dismiss"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="subject")
    def short_subject(self, obj) -> str:
        url = reverse("admin:ingest_battle_changelist")
        key = {"user": "user_hash", "ip": "ip_hash"}.get(obj.subject_kind, "pair_id")
        return format_html('<a href="{}?{}={}">{}…</a>', url, key, obj.subject, obj.subject[:16])

    @admin.display(description="figures")
    def figures(self, obj) -> str:
        return ", ".join(f"{k}={v}" for k, v in obj.detail.items() if k != "window")

    def _resolve(self, request, *, exclude: bool):
        """Resolve the open reports among the selection; count battles (exclude) or reports."""

        def apply(qs, reason):
            total = 0
            for report in qs.filter(status=AnomalyReport.Status.OPEN):
                changed = resolve_report(
                    report=report, exclude=exclude, reason=reason, actor=request.user
                )
                total += changed if exclude else 1
            return total

        return apply

    @admin.action(description="Exclude the battles of the selected reports", permissions=["change"])
    def exclude_battles(self, request, queryset):
        return reason_action(
            self,
            request,
            queryset,
            title="Exclude the battles of these reports",
            apply=self._resolve(request, exclude=True),
            done="Excluded {n} battle(s).",
        )

    @admin.action(description="Dismiss the selected reports", permissions=["change"])
    def dismiss(self, request, queryset):
        return reason_action(
            self,
            request,
            queryset,
            title="Dismiss these reports",
            apply=self._resolve(request, exclude=False),
            done="Dismissed {n} report(s).",
        )
