"""Admin for the rating configuration and the snapshots (with "Recompute now")."""

from __future__ import annotations

from celery.result import EagerResult
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.dateparse import parse_datetime

from core.admin_base import ReadOnlyAdmin
from core.audit import AuditedAdmin, record

from .models import RatingConfig, Snapshot


@admin.register(RatingConfig)
class RatingConfigAdmin(AuditedAdmin[RatingConfig]):
    list_display = (
        "__str__",
        "method",
        "weights",
        "rounds",
        "anchor",
        "anchor_value",
        "min_model_votes",
        "updated_at",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not RatingConfig.objects.exists() and super().has_add_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: RatingConfig | None = None) -> bool:
        return False

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, object] | None = None
    ) -> HttpResponseRedirect:
        config = RatingConfig.current()
        return redirect(reverse("admin:leaderboard_ratingconfig_change", args=[config.pk]))


@admin.register(Snapshot)
class SnapshotAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "status",
        "computed_at",
        "trigger",
        "battles",
        "users",
        "method",
        "rounds",
        "duration_seconds",
        "error_short",
    )
    list_filter = ("status", "trigger")
    readonly_fields = [f.name for f in Snapshot._meta.fields]
    change_list_template = "admin/leaderboard/snapshot/change_list.html"

    @admin.display(description="error")
    def error_short(self, obj: Snapshot) -> str:
        return obj.error[:80]

    def get_urls(self) -> list[URLPattern]:
        return [
            path(
                "recompute/",
                self.admin_site.admin_view(self.recompute_view),
                name="leaderboard_snapshot_recompute",
            ),
            *super().get_urls(),
        ]

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, object] | None = None
    ) -> HttpResponse:
        from .tasks import true_status

        extra = {
            "can_recompute": request.user.has_perm("leaderboard.recompute_snapshot"),
            # The lease decides what is running, not the last status a run wrote.
            "status": true_status(),
        }
        return super().changelist_view(request, {**(extra_context or {}), **extra})

    def recompute_view(self, request: HttpRequest) -> HttpResponse:
        from .board_changes import expected_seconds
        from .tasks import recompute_leaderboard, set_status, true_status

        if not request.user.has_perm("leaderboard.recompute_snapshot"):
            raise PermissionDenied
        if request.method == "POST":
            seconds = expected_seconds()
            set_status("queued", trigger="admin")
            record(actor=request.user, action="recompute now", target="leaderboard")
            try:
                result = recompute_leaderboard.apply_async(kwargs={"trigger": "admin"})
            except Exception as exc:  # eager mode runs it here; the status shows the failure
                self.message_user(request, f"Recompute failed: {exc}", messages.ERROR)
            else:
                done = result.result if isinstance(result, EagerResult) else None
                self.message_user(
                    request,
                    f"Recomputed: snapshot {done} is published."
                    if isinstance(done, int)
                    else f"Recompute requested: the new board is published within about {seconds} s.",
                    messages.SUCCESS,
                )
            return redirect(reverse("admin:leaderboard_snapshot_recompute"))
        status = true_status()
        at = parse_datetime(str(status["at"])) if status and status.get("at") else None
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Recompute the leaderboard",
            "status": status,
            "status_at": at,
            "running": bool(status and status["state"] in ("queued", "running")),
            "latest": Snapshot.objects.order_by("-id")[:5],
        }
        return TemplateResponse(request, "admin/leaderboard/snapshot/recompute.html", context)
