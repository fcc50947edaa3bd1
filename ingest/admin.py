"""Admin for ingest's logs: shown completions and single accepted completions (read-only)."""

from __future__ import annotations

from django.contrib import admin

from core.admin_base import ReadOnlyAdmin

from .models import CompletionLog, SingleOutcome


class _ReadOnlyLog(ReadOnlyAdmin):
    show_full_result_count = False


@admin.register(CompletionLog)
class CompletionLogAdmin(_ReadOnlyLog):
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


@admin.register(SingleOutcome)
class SingleOutcomeAdmin(_ReadOnlyLog):
    list_display = ("completion_id", "model", "privacy", "received_at")
    list_filter = ("model",)
    search_fields = ("completion_id",)
