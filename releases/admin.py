"""Admin for dataset releases: make one (or one like a selected release), withdraw or list
it on /data/, delete it with its files. Every step is in the audit log."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from core.audit import reason_action

from . import services
from .models import DatasetRelease, version_validator
from .selectors import file_url
from .tasks import build_release_task


class NewReleaseForm(forms.ModelForm[DatasetRelease]):
    version = forms.CharField(
        required=False,
        max_length=40,
        validators=[version_validator],
        help_text="Empty: the cut-off's date (YYYY-MM-DD).",
    )

    class Meta:
        model = DatasetRelease
        fields = (
            "version",
            "license",
            "min_age_days",
            "stable_ids",
            "include_simulated",
            "include_excluded",
            "on_secret",
        )
        help_texts = {
            "license": "The licence the card names (e.g. cc-by-4.0, cc-by-nc-4.0, odc-by).",
            "min_age_days": "Only battles older than this many days are released.",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["license"].initial = settings.ARENA_RELEASE_LICENSE
        self.fields["min_age_days"].initial = settings.ARENA_RELEASE_MIN_AGE_DAYS

    def clean_version(self) -> str:
        version: str = self.cleaned_data["version"].strip()
        if version and DatasetRelease.objects.filter(version=version).exists():
            raise forms.ValidationError(f"Release {version} exists already: choose another name.")
        return version


def _options(release: DatasetRelease, version: str = "") -> services.ReleaseOptions:
    # Every option but the version is a field of the release, under the same name.
    names = [f.name for f in fields(services.ReleaseOptions) if f.name != "version"]
    return services.ReleaseOptions(**{n: getattr(release, n) for n in names}, version=version)


def _queue_build(release: DatasetRelease) -> None:
    transaction.on_commit(lambda: build_release_task.delay(release_id=release.pk))


@admin.register(DatasetRelease)
class DatasetReleaseAdmin(admin.ModelAdmin[DatasetRelease]):
    form = NewReleaseForm
    list_display = (
        "version",
        "status",
        "public",
        "cutoff",
        "battles",
        "size",
        "created_at",
        "seconds",
    )
    list_filter = ("status", "public")
    actions = ["release_again", "withdraw", "list_again"]
    readonly_fields = (
        "status",
        "public",
        "cutoff",
        "counts",
        "file_links",
        "size_bytes",
        "board",
        "seconds",
        "error",
        "created_at",
        "finished_at",
    )

    @admin.display(description="battles")
    def battles(self, obj: DatasetRelease) -> int | None:
        battles: int | None = obj.counts.get("battles")
        return battles

    @admin.display(description="bytes", ordering="size_bytes")
    def size(self, obj: DatasetRelease) -> int:
        return obj.size_bytes

    @admin.display(description="files")
    def file_links(self, obj: DatasetRelease) -> SafeString:
        return format_html_join(
            format_html("<br>"),
            '<a href="{}">{}</a> ({} bytes)',
            ((file_url(release=obj, name=f["name"]), f["name"], f["bytes"]) for f in obj.files),
        )

    def has_change_permission(
        self, request: HttpRequest, obj: DatasetRelease | None = None
    ) -> bool:
        return False  # a release is immutable; withdraw it or make a new one

    def get_fields(
        self, request: HttpRequest, obj: DatasetRelease | None = None
    ) -> tuple[str, ...]:
        if obj is None:
            return NewReleaseForm.Meta.fields
        return ("version", "license", "min_age_days", "stable_ids", "include_simulated",
                "include_excluded", "on_secret", *self.readonly_fields)  # fmt: skip

    def get_readonly_fields(
        self, request: HttpRequest, obj: DatasetRelease | None = None
    ) -> tuple[str, ...]:
        return () if obj is None else self.get_fields(request, obj)

    def save_model(
        self, request: HttpRequest, obj: DatasetRelease, form: Any, change: bool
    ) -> None:
        release = services.start_release(
            options=_options(obj, form.cleaned_data.get("version", "")), actor=request.user
        )
        obj.pk, obj.version = release.pk, release.version
        _queue_build(release)
        self.message_user(
            request, f"Release {release.version} is being built; reload this list to follow it."
        )

    def delete_model(self, request: HttpRequest, obj: DatasetRelease) -> None:
        services.delete_release(release=obj, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[DatasetRelease]) -> None:
        for release in queryset:
            services.delete_release(release=release, actor=request.user)

    @admin.action(description="Make a new release with the selected release's options")
    def release_again(self, request: HttpRequest, queryset: QuerySet[DatasetRelease]) -> None:
        for old in queryset:
            release = services.start_release(options=_options(old), actor=request.user)
            _queue_build(release)
            self.message_user(
                request, f"Release {release.version} (options of {old.version}) is being built."
            )

    @admin.action(description="Withdraw the selected releases from /data/")
    def withdraw(
        self, request: HttpRequest, queryset: QuerySet[DatasetRelease]
    ) -> TemplateResponse | None:
        return self._set_public(
            request,
            queryset,
            public=False,
            title="Withdraw releases from the download page",
            done="{n} release(s) withdrawn from /data/ (their files stay in the storage).",
        )

    @admin.action(description="List the selected releases on /data/ again")
    def list_again(
        self, request: HttpRequest, queryset: QuerySet[DatasetRelease]
    ) -> TemplateResponse | None:
        return self._set_public(
            request,
            queryset,
            public=True,
            title="List releases on the download page",
            done="{n} release(s) listed on /data/.",
        )

    def _set_public(
        self,
        request: HttpRequest,
        queryset: QuerySet[DatasetRelease],
        *,
        public: bool,
        title: str,
        done: str,
    ) -> TemplateResponse | None:
        return reason_action(
            self,
            request,
            queryset,
            title=title,
            apply=lambda qs, reason: services.set_public(
                releases=qs, public=public, actor=request.user, reason=reason
            ),
            done=done,
        )
