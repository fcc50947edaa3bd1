"""Admin for API clients (issued once, revoked with a reason) and the audit log (read-only, CSV)."""

from __future__ import annotations

import csv
import json
from typing import Any

from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, reverse

from .admin_base import ReadOnlyAdmin, admin_route
from .audit import AuditedAdmin, reason_action, record
from .auth import hash_key, new_key
from .csv_cells import safe_row
from .models import ApiClient, AuditEntry
from .services import revoke_api_key

CSV_COLUMNS = ("at", "actor_name", "action", "target", "reason", "affected", "before", "after")


@admin.register(ApiClient)
class ApiClientAdmin(AuditedAdmin[ApiClient]):
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

    # Shown but never edited: set when the key is issued and as it is used.
    RECORDED = (
        "key_prefix",
        "created_at",
        "created_by",
        "revoked_at",
        "last_used_at",
        "request_count",
    )

    def get_fields(self, request: HttpRequest, obj: ApiClient | None = None) -> tuple[str, ...]:
        editable = ("name", "rate_limit_per_minute", "audit_reason")
        return editable if obj is None else editable + self.RECORDED

    def get_readonly_fields(
        self, request: HttpRequest, obj: ApiClient | None = None
    ) -> tuple[str, ...]:
        return () if obj is None else self.RECORDED

    def has_delete_permission(self, request: HttpRequest, obj: ApiClient | None = None) -> bool:
        return False  # revoke instead: the votes keep their client

    def get_queryset(self, request: HttpRequest) -> QuerySet[ApiClient]:
        return super().get_queryset(request).annotate(n_votes=Count("battle"))

    @admin.display(description="votes", ordering="n_votes")
    def votes(self, obj: Any) -> int:
        n_votes: int = obj.n_votes  # annotated by get_queryset
        return n_votes

    @admin.display(boolean=True)
    def active(self, obj: ApiClient) -> bool:
        return obj.is_active

    def save_model(self, request: HttpRequest, obj: ApiClient, form: Any, change: bool) -> None:
        if change:
            return super().save_model(request, obj, form, change)
        key, prefix = new_key()
        obj.key_prefix, obj.key_hash = prefix, hash_key(key)
        obj.created_by = request.user if isinstance(request.user, User) else None  # staff
        super().save_model(request, obj, form, change)
        messages.warning(
            request,
            f"API key for “{obj.name}”: {key} — copy it now. Only its hash is stored; "
            "it cannot be shown again.",
        )

    @admin.action(description="Revoke selected API keys (with a reason)", permissions=["change"])
    def revoke(
        self, request: HttpRequest, queryset: QuerySet[ApiClient]
    ) -> TemplateResponse | None:
        def apply(qs: QuerySet[ApiClient], reason: str) -> int:
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

    def get_urls(self) -> list[URLPattern]:
        return [
            admin_route(self, "export.csv", self.export_csv, "core_auditentry_export"),
            *super().get_urls(),
        ]

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra = {
            "export_url": reverse("admin:core_auditentry_export") + "?" + request.GET.urlencode()
        }
        return super().changelist_view(request, {**(extra_context or {}), **extra})

    def export_csv(self, request: HttpRequest) -> HttpResponse:
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
