"""Admin for external sources, boards, scores and the alias table.

Editing an alias re-matches the already imported scores of its source and queues new
correlations for the published board, so a fix in the alias table shows on the pages
without a re-import.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from .models import CorrelationResult, ExternalAlias, ExternalBoard, ExternalScore, ExternalSource
from .services import resolve_scores, schedule_correlations


def _aliases_changed(source_ids: Iterable[int]) -> None:
    resolve_scores(source_ids=source_ids)
    schedule_correlations()


class ExternalAliasInline(admin.TabularInline[ExternalAlias, ExternalSource]):
    model = ExternalAlias
    extra = 0
    fields = ("name", "model", "note", "caveat")
    autocomplete_fields = ("model",)


@admin.register(ExternalSource)
class ExternalSourceAdmin(admin.ModelAdmin[ExternalSource]):
    list_display = ("name", "key", "kind", "url")
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    search_fields = ("name", "key")
    inlines = [ExternalAliasInline]

    def save_related(
        self, request: HttpRequest, form: ModelForm[ExternalSource], formsets: Any, change: bool
    ) -> None:
        super().save_related(request, form, formsets, change)
        _aliases_changed([form.instance.pk])


@admin.register(ExternalAlias)
class ExternalAliasAdmin(admin.ModelAdmin[ExternalAlias]):
    list_display = ("name", "source", "model", "caveat", "note")
    list_filter = ("source", "caveat", ("model", admin.EmptyFieldListFilter))
    search_fields = ("name", "model__key", "note")
    autocomplete_fields = ("model",)

    def save_model(
        self, request: HttpRequest, obj: ExternalAlias, form: ModelForm[ExternalAlias], change: bool
    ) -> None:
        super().save_model(request, obj, form, change)
        _aliases_changed([obj.source_id])

    def delete_model(self, request: HttpRequest, obj: ExternalAlias) -> None:
        source_id = obj.source_id
        super().delete_model(request, obj)
        _aliases_changed([source_id])

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ExternalAlias]) -> None:
        source_ids = set(queryset.values_list("source_id", flat=True))
        super().delete_queryset(request, queryset)
        _aliases_changed(source_ids)


@admin.register(ExternalBoard)
class ExternalBoardAdmin(admin.ModelAdmin[ExternalBoard]):
    list_display = ("label", "source", "metric", "release", "active", "imported_at", "file_name")
    list_filter = ("source", "active")
    list_editable = ("active",)
    readonly_fields = ("file_name", "file_sha256", "details", "imported_at")
    search_fields = ("label", "metric", "release")

    def save_model(
        self, request: HttpRequest, obj: ExternalBoard, form: ModelForm[ExternalBoard], change: bool
    ) -> None:
        super().save_model(request, obj, form, change)
        schedule_correlations()


@admin.register(ExternalScore)
class ExternalScoreAdmin(admin.ModelAdmin[ExternalScore]):
    """Find unmatched names here (filter 'Match: Unmatched'), then add an alias for them."""

    list_display = ("name", "board", "value", "model", "match")
    list_filter = ("match", "board__source", "board")
    search_fields = ("name", "model__key")
    readonly_fields = ("board", "name", "value", "extra", "model", "match")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # scores come from imports only


@admin.register(CorrelationResult)
class CorrelationResultAdmin(admin.ModelAdmin[CorrelationResult]):
    list_display = ("snapshot", "slice_key", "board", "n", "spearman", "pearson", "computed_at")
    list_filter = ("slice_key", "board__source")
    readonly_fields = [f.name for f in CorrelationResult._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
