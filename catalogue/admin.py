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
from django.urls import URLPattern, reverse

from core.admin_base import ChangeContextAdmin, admin_route
from core.audit import AuditedAdmin, reason_action
from core.board_changes import BoardNoteAdmin
from core.errors import ActionRefused

from .models import ArenaModel, ModelAlias, Visibility
from .services import merge_model, unmerge_model

# Fields whose change alters the board (what it counts, or what it shows for a model).
BOARD_FIELDS = ("key", "display_name", "organization", "license", "visibility")
VISIBILITY_NEWS = {
    Visibility.PUBLIC: "is now public",
    Visibility.PRIVATE: "is now private (collecting votes, not shown)",
    Visibility.HIDDEN: "is now hidden",
    Visibility.RETIRED: "is now retired (its page and history stay)",
}


def visibility_news(model: ArenaModel) -> str:
    return f"“{model.display_name}” {VISIBILITY_NEWS.get(Visibility(model.visibility), 'changed')}"


class ModelAliasInline(admin.TabularInline[ModelAlias, ArenaModel]):
    model = ModelAlias
    extra = 0
    fields = ("key", "note", "created_at")
    readonly_fields = ("created_at",)


class ModelChoice(forms.ModelChoiceField):  # type: ignore[type-arg]
    """Models by display name, the key alongside."""

    def label_from_instance(self, obj: Any) -> str:
        return f"{obj.display_name} ({obj.key})"


class MergeForm(forms.Form):
    target = ModelChoice(
        queryset=ArenaModel.objects.filter(merged_into__isnull=True),
        help_text="The model this key's votes will count for from the next recompute.",
    )
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 60}), max_length=2000)


@admin.register(ArenaModel)
class ArenaModelAdmin(BoardNoteAdmin, AuditedAdmin[ArenaModel], ChangeContextAdmin[ArenaModel]):
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

    def save_model(self, request: HttpRequest, obj: ArenaModel, form: Any, change: bool) -> None:
        before = (
            ArenaModel.objects.filter(pk=obj.pk).values(*BOARD_FIELDS).first() if change else None
        )
        super().save_model(request, obj, form, change)
        if before is None:
            return
        changed = [f for f in BOARD_FIELDS if before[f] != getattr(obj, f)]
        if "visibility" in changed:
            news = visibility_news(obj)
            self.board_changed(request, what=news, news=news)
        elif changed:
            self.board_changed(request, what=f"“{obj.display_name}”: {', '.join(changed)} changed")

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        super().save_formset(request, form, formset, change)
        if formset.model is ModelAlias and (
            formset.new_objects or formset.changed_objects or formset.deleted_objects
        ):
            self.board_changed(request, what=f"aliases of “{form.instance.display_name}” changed")

    def has_merge_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("catalogue.merge_arenamodel"))

    def get_urls(self) -> list[URLPattern]:
        return [
            admin_route(self, "<int:pk>/merge/", self.merge_view, "catalogue_arenamodel_merge"),
            *super().get_urls(),
        ]

    def change_context(self, request: HttpRequest, object_id: str) -> dict[str, Any]:
        return {"can_merge": self.has_merge_permission(request)}

    def merge_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        if not self.has_merge_permission(request):
            raise PermissionDenied
        source = get_object_or_404(ArenaModel, pk=pk)
        form = MergeForm(request.POST or None)
        # Hidden models are listed only when asked for (?hidden=1): a merge target is
        # normally a model the board shows.
        targets = ArenaModel.objects.filter(merged_into__isnull=True).exclude(pk=pk)
        if request.GET.get("hidden") != "1":
            targets = targets.exclude(visibility=Visibility.HIDDEN)
        cast(
            "forms.ModelChoiceField[ArenaModel]", form.fields["target"]
        ).queryset = targets.order_by("display_name")
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
                target = form.cleaned_data["target"]
                self.board_changed(
                    request, what=f"“{source.display_name}” merged into “{target.display_name}”"
                )
                self.message_user(
                    request,
                    f"The votes of “{source.display_name}” ({source.key}) now count for "
                    f"“{target.display_name}”.",
                    messages.SUCCESS,
                )
                return redirect(reverse("admin:catalogue_arenamodel_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "form": form,
            "title": f"Merge “{source.display_name}” into another model",
            "intro": "Its battles will count for the chosen model from the next recompute, new votes naming "
            f"{source.key} are stored against it, and “{source.display_name}” is hidden. Nothing "
            "is deleted; “Unmerge” undoes it.",
            "submit": "Merge",
            "more": (
                ""
                if request.GET.get("hidden") == "1"
                else "Hidden models are not listed; add ?hidden=1 to the address to list them."
            ),
        }
        return TemplateResponse(request, "moderation/form.html", context)

    @admin.action(description="Unmerge selected models (with a reason)", permissions=["merge"])
    def unmerge(
        self, request: HttpRequest, queryset: QuerySet[ArenaModel]
    ) -> TemplateResponse | None:
        def apply(qs: QuerySet[ArenaModel], reason: str) -> int:
            names = []
            for model in qs.filter(merged_into__isnull=False):
                unmerge_model(source=model, reason=reason, actor=request.user)
                names.append(f"“{model.display_name}”")
            if names:
                self.board_changed(request, what=f"unmerged {', '.join(names)}")
            return len(names)

        return reason_action(
            self,
            request,
            queryset,
            title="Unmerge models",
            apply=apply,
            done="Unmerged {n} model(s).",
        )


@admin.register(ModelAlias)
class ModelAliasAdmin(BoardNoteAdmin, AuditedAdmin[ModelAlias]):
    list_display = ("key", "model", "note", "created_at")
    search_fields = ("key", "model__key")
    autocomplete_fields = ("model",)

    def save_model(self, request: HttpRequest, obj: ModelAlias, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        self.board_changed(request, what=f"alias {obj.key} of “{obj.model.display_name}”")

    def delete_model(self, request: HttpRequest, obj: ModelAlias) -> None:
        super().delete_model(request, obj)
        self.board_changed(request, what=f"alias {obj.key} removed")

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ModelAlias]) -> None:
        super().delete_queryset(request, queryset)
        self.board_changed(request, what="aliases removed")
