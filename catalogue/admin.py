"""Admin for the catalogue: models (audited; merge into another model, unmerge) and aliases."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from core.audit import AuditedAdmin, reason_action
from core.errors import ActionRefused

from .models import ArenaModel, ModelAlias
from .services import merge_model, unmerge_model


class ModelAliasInline(admin.TabularInline[ModelAlias, ArenaModel]):
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
class ArenaModelAdmin(AuditedAdmin[ArenaModel]):
    list_display = (
        "key",
        "display_name",
        "organization",
        "style",
        "visibility",
        "merged_into",
        "release_date",
        "retired_at",
        "updated_at",
    )
    list_filter = ("visibility", "style", "organization")
    search_fields = ("key", "display_name", "organization", "aliases__key")
    inlines = [ModelAliasInline]
    readonly_fields = ("merged_into",)
    actions = ["unmerge"]

    def has_merge_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("catalogue.merge_arenamodel"))

    def get_urls(self) -> list[URLPattern]:
        return [
            path(
                "<int:pk>/merge/",
                self.admin_site.admin_view(self.merge_view),
                name="catalogue_arenamodel_merge",
            ),
            *super().get_urls(),
        ]

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        extra = {"can_merge": self.has_merge_permission(request)}
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **extra})

    def merge_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        if not self.has_merge_permission(request):
            raise PermissionDenied
        source = get_object_or_404(ArenaModel, pk=pk)
        form = MergeForm(request.POST or None)
        cast(
            "forms.ModelChoiceField[ArenaModel]", form.fields["target"]
        ).queryset = ArenaModel.objects.filter(merged_into__isnull=True).exclude(pk=pk)
        if request.method == "POST" and form.is_valid():
            try:
                merge_model(
                    source=source,
                    target=form.cleaned_data["target"],
                    reason=form.cleaned_data["reason"],
                    actor=request.user,
                )
            except ActionRefused as exc:
                form.add_error(None, str(exc))
            else:
                self.message_user(
                    request,
                    f"{source.key} now counts as {form.cleaned_data['target'].key} from the next recompute.",
                    messages.SUCCESS,
                )
                return redirect(reverse("admin:catalogue_arenamodel_changelist"))
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
    def unmerge(
        self, request: HttpRequest, queryset: QuerySet[ArenaModel]
    ) -> TemplateResponse | None:
        def apply(qs: QuerySet[ArenaModel], reason: str) -> int:
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
class ModelAliasAdmin(AuditedAdmin[ModelAlias]):
    list_display = ("key", "model", "note", "created_at")
    search_fields = ("key", "model__key")
    autocomplete_fields = ("model",)
