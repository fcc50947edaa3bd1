"""Admin for the catalogue (audited; merge/unmerge), the rating configuration and snapshots."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from moderation.admin_tools import AuditedAdmin, reason_action
from moderation.services import ModerationError, merge_model, record, unmerge_model

from .models import ArenaModel, ModelAlias, RatingConfig, Snapshot


class ModelAliasInline(admin.TabularInline):
    model = ModelAlias
    extra = 0
    fields = ("key", "note", "created_at")
    readonly_fields = ("created_at",)


class MergeForm(forms.Form):
    target = forms.ModelChoiceField(
        queryset=ArenaModel.objects.filter(merged_into__isnull=True),
        help_text="The model this key's votes will count for from the next recompute.",
    )
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 60}), max_length=2000)


@admin.register(ArenaModel)
class ArenaModelAdmin(AuditedAdmin):
    list_display = (
        "key",
        "display_name",
        "organization",
        "style",
        "visibility",
        "merged_into",
        "updated_at",
    )
    list_filter = ("visibility", "style", "organization")
    search_fields = ("key", "display_name", "organization", "aliases__key")
    inlines = [ModelAliasInline]
    readonly_fields = ("merged_into",)
    actions = ["unmerge"]

    def has_merge_permission(self, request) -> bool:
        return request.user.has_perm("leaderboard.merge_arenamodel")

    def get_urls(self):
        return [
            path(
                "<int:pk>/merge/",
                self.admin_site.admin_view(self.merge_view),
                name="leaderboard_arenamodel_merge",
            ),
            *super().get_urls(),
        ]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra = {"can_merge": self.has_merge_permission(request)}
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **extra})

    def merge_view(self, request, pk: int):
        if not self.has_merge_permission(request):
            raise PermissionDenied
        source = get_object_or_404(ArenaModel, pk=pk)
        form = MergeForm(request.POST or None)
        form.fields["target"].queryset = ArenaModel.objects.filter(
            merged_into__isnull=True
        ).exclude(pk=pk)
        if request.method == "POST" and form.is_valid():
            try:
                merge_model(
                    source=source,
                    target=form.cleaned_data["target"],
                    reason=form.cleaned_data["reason"],
                    actor=request.user,
                )
            except ModerationError as exc:
                form.add_error(None, str(exc))
            else:
                self.message_user(
                    request,
                    f"{source.key} now counts as {form.cleaned_data['target'].key} from the next recompute.",
                    messages.SUCCESS,
                )
                return redirect(reverse("admin:leaderboard_arenamodel_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "form": form,
            "title": f"Merge {source.key} into another model",
            "intro": "Its battles will count for the chosen model from the next recompute, new votes naming "
            f"{source.key} are stored against it, and {source.key} is hidden. Nothing is deleted; "
            "“Unmerge” undoes it.",
            "submit": "Merge",
        }
        return TemplateResponse(request, "moderation/form.html", context)

    @admin.action(description="Unmerge selected models (with a reason)", permissions=["merge"])
    def unmerge(self, request, queryset):
        def apply(qs, reason):
            n = 0
            for model in qs.filter(merged_into__isnull=False):
                unmerge_model(source=model, reason=reason, actor=request.user)
                n += 1
            return n

        return reason_action(
            self,
            request,
            queryset,
            title="Unmerge models",
            apply=apply,
            done="Unmerged {n} model(s).",
        )


@admin.register(ModelAlias)
class ModelAliasAdmin(AuditedAdmin):
    list_display = ("key", "model", "note", "created_at")
    search_fields = ("key", "model__key")
    autocomplete_fields = ("model",)


@admin.register(RatingConfig)
class RatingConfigAdmin(AuditedAdmin):
    list_display = (
        "__str__",
        "method",
        "rounds",
        "anchor",
        "anchor_value",
        "min_model_votes",
        "updated_at",
    )

    def has_add_permission(self, request) -> bool:
        return not RatingConfig.objects.exists() and super().has_add_permission(request)

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def changelist_view(self, request, extra_context=None):
        config = RatingConfig.current()
        return redirect(reverse("admin:leaderboard_ratingconfig_change", args=[config.pk]))


@admin.register(Snapshot)
class SnapshotAdmin(admin.ModelAdmin):
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

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="error")
    def error_short(self, obj) -> str:
        return obj.error[:80]

    def get_urls(self):
        return [
            path(
                "recompute/",
                self.admin_site.admin_view(self.recompute_view),
                name="leaderboard_snapshot_recompute",
            ),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        from .tasks import get_status

        extra = {
            "can_recompute": request.user.has_perm("leaderboard.recompute_snapshot"),
            "status": get_status(),
        }
        return super().changelist_view(request, {**(extra_context or {}), **extra})

    def recompute_view(self, request):
        from .tasks import get_status, recompute_leaderboard, set_status

        if not request.user.has_perm("leaderboard.recompute_snapshot"):
            raise PermissionDenied
        if request.method == "POST":
            set_status("queued", trigger="admin")
            record(actor=request.user, action="recompute now", target="leaderboard")
            try:
                recompute_leaderboard.apply_async(kwargs={"trigger": "admin"})
            except Exception as exc:  # eager mode runs it here; the status shows the failure
                self.message_user(request, f"Recompute failed: {exc}", messages.ERROR)
            return redirect(reverse("admin:leaderboard_snapshot_recompute"))
        status = get_status()
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Recompute the leaderboard",
            "status": status,
            "running": bool(status and status["state"] in ("queued", "running")),
            "latest": Snapshot.objects.order_by("-id")[:5],
        }
        return TemplateResponse(request, "admin/leaderboard/snapshot/recompute.html", context)
