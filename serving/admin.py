"""Admin for pair serving: providers, the sampling configuration (with its pair table), fits.

The sampling configuration's page shows what the endpoint does now: the newest latency
fit under the current tau and floor -- each model's fitted latency and share of battles,
every pair's probability, and the median wait for the slower model under this choice and
under uniform sampling. API keys are never shown: only the environment variable's name and
whether it is set in the web process.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseRedirect
from django.shortcuts import redirect
from django.urls import URLPattern, reverse

from core.admin_base import ChangeContextAdmin, admin_route

from .fitting import fit_pair_distribution
from .models import ModelProvider, PairDistribution, SamplingConfig
from .selectors import (
    fits_for,
    latest_distribution,
    sampling_table,
    sampling_tau,
    served_providers,
    slot_for,
)

# What a provider's row in the list and its form both show, in this order.
_PROVIDER_COLUMNS = (
    "model",
    "kind",
    "base_url",
    "remote_model",
    "api_key_env",
    "key_status",
    "timeout_seconds",
    "max_concurrency",
)


@admin.register(ModelProvider)
class ModelProviderAdmin(admin.ModelAdmin[ModelProvider]):
    list_display = (*_PROVIDER_COLUMNS, "enabled")
    list_filter = ("kind", "enabled", "model__visibility")
    list_editable = ("enabled",)
    search_fields = ("model__key", "remote_model", "base_url")
    autocomplete_fields = ("model",)
    readonly_fields = ("key_status", "created_at", "updated_at")
    fields = (*_PROVIDER_COLUMNS, "tags", "enabled", "created_at", "updated_at")

    @admin.display(description="API key")
    def key_status(self, obj: ModelProvider | None) -> str:
        # Whether the variable is set in this (web) process -- never its value.
        if obj is None or not obj.api_key_env:
            return "none needed"
        return "set" if obj.key_present else "MISSING (the model is not served)"


@admin.register(SamplingConfig)
class SamplingConfigAdmin(ChangeContextAdmin[SamplingConfig]):
    change_form_template = "admin/serving/samplingconfig/change_form.html"
    fields = (
        "tau_seconds",
        "floor",
        "information_weight",
        "prior_weight",
        "window_days",
        "max_samples_per_model",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(
        self, request: HttpRequest, obj: SamplingConfig | None = None
    ) -> bool:
        return False

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponseRedirect:
        # One row: the list is just a detour to it.
        config = SamplingConfig.current()
        return redirect(reverse("admin:serving_samplingconfig_change", args=[config.pk]))

    def get_urls(self) -> list[URLPattern]:
        return [
            admin_route(self, "fit/", self.fit_view, "serving_samplingconfig_fit"),
            *super().get_urls(),
        ]

    def fit_view(self, request: HttpRequest) -> HttpResponseRedirect:
        if request.method != "POST" or not self.has_change_permission(request):
            raise PermissionDenied
        row = fit_pair_distribution()
        self.message_user(
            request,
            f"Fitted {len(row.fits)} models on {row.samples:,} latencies (fit {row.pk}).",
            messages.SUCCESS,
        )
        return redirect(
            reverse("admin:serving_samplingconfig_change", args=[SamplingConfig.current().pk])
        )

    def change_context(self, request: HttpRequest, object_id: str) -> dict[str, Any]:
        config = SamplingConfig.current()
        dist = latest_distribution()
        providers = served_providers()
        slots = [slot_for(p) for p in providers]
        fits = fits_for(slots, dist, prior_weight=config.prior_weight)
        table = sampling_table(
            [s.key for s in slots],
            fits,
            tau=sampling_tau(config),
            floor=config.floor,
            information_weight=config.information_weight,
        )
        missing = [p.model.key for p in providers if not p.key_present]
        return {
            "table": table,
            "distribution": dist,
            "missing_keys": missing,
            "fit_url": reverse("admin:serving_samplingconfig_fit"),
        }


@admin.register(PairDistribution)
class PairDistributionAdmin(admin.ModelAdmin[PairDistribution]):
    list_display = (
        "id",
        "computed_at",
        "models",
        "samples",
        "tau_seconds",
        "floor",
        "median_wait",
        "uniform_median_wait",
        "duration_ms",
    )
    readonly_fields = [f.name for f in PairDistribution._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(
        self, request: HttpRequest, obj: PairDistribution | None = None
    ) -> bool:
        return False

    @admin.display(description="models")
    def models(self, obj: PairDistribution) -> int:
        return len(obj.fits)

    @admin.display(description="median wait (s)")
    def median_wait(self, obj: PairDistribution) -> str:
        return "-" if obj.median_wait_s is None else f"{obj.median_wait_s:.3f}"

    @admin.display(description="uniform median wait (s)")
    def uniform_median_wait(self, obj: PairDistribution) -> str:
        if obj.uniform_median_wait_s is None:
            return "-"
        return f"{obj.uniform_median_wait_s:.3f}"
