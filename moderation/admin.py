"""Admin for moderating votes: battles (exclude/restore/release with a reason) and anomaly
reports (exclude their battles, or dismiss them and release the votes they held)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from catalogue.models import ArenaModel, Visibility
from core.admin_base import ReadOnlyAdmin
from core.audit import Actor, reason_action
from core.board_changes import BoardNoteAdmin
from core.errors import ActionRefused
from ingest.models import Battle

from .models import AnomalyReport
from .services import (
    exclude_time_range,
    exclude_user,
    release_battles,
    resolve_report,
    set_excluded,
)


class _ModerationForm(forms.Form):
    mode = forms.ChoiceField(
        choices=[("exclude", "Exclude"), ("restore", "Restore")],
        widget=forms.RadioSelect,
        initial="exclude",
    )
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 60}), max_length=2000)

    def apply(self, *, actor: Actor) -> int:
        """Exclude or restore the battles the valid form names; how many changed state."""
        raise NotImplementedError

    @property
    def restore(self) -> bool:
        return bool(self.cleaned_data["mode"] == "restore")


class UserModerationForm(_ModerationForm):
    user_hash = forms.RegexField(
        regex=r"^[0-9a-f]{64}$",
        label="Pseudonymised user id",
        error_messages={"invalid": "A pseudonymised id is 64 hexadecimal characters."},
    )

    def apply(self, *, actor: Actor) -> int:
        d = self.cleaned_data
        return exclude_user(
            user_hash=d["user_hash"], reason=d["reason"], actor=actor, restore=self.restore
        )


class RangeModerationForm(_ModerationForm):
    start = forms.DateTimeField(help_text="UTC, e.g. 2026-11-01 00:00")
    end = forms.DateTimeField(help_text="UTC, exclusive")

    def apply(self, *, actor: Actor) -> int:
        d = self.cleaned_data
        return exclude_time_range(
            start=d["start"], end=d["end"], reason=d["reason"], actor=actor, restore=self.restore
        )


# The request attribute that lists hidden models in the "involves model" filter.
_HIDDEN_MODELS = "hidden_models"
# Above this many battles a bulk exclude/restore asks for the count typed out.
CONFIRM_COUNT_OVER = 1000


class InvolvesModelFilter(admin.SimpleListFilter):
    """Battles in which a model took part, on top or at the bottom."""

    title = "involves model"
    parameter_name = "involves"

    def lookups(
        self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]
    ) -> list[tuple[str, str]]:
        shown = ArenaModel.objects.order_by("display_name")
        if not getattr(request, _HIDDEN_MODELS, False):
            shown = shown.exclude(visibility=Visibility.HIDDEN)
        return [(str(m.pk), f"{m.display_name} ({m.key})") for m in shown]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Battle]) -> QuerySet[Battle]:
        value = self.value()
        if not value or not value.isdigit():
            return queryset
        return queryset.filter(Q(model_a_id=int(value)) | Q(model_b_id=int(value)))


@admin.register(Battle)
class BattleAdmin(BoardNoteAdmin, ReadOnlyAdmin):
    list_display = (
        "pair_id",
        "user",
        "model_a",
        "model_b",
        "outcome",
        "kind",
        "language",
        "task_type",
        "privacy",
        "source",
        "received_at",
        "excluded",
        "hold",
        "excluded_reason",
    )
    list_filter = (
        "excluded",
        "hold",
        "kind",
        "outcome",
        "source",
        "privacy",
        "language",
        "task_type",
        "context_bucket",
        InvolvesModelFilter,
    )
    search_fields = ("=pair_id", "=user_hash", "=ip_hash")
    date_hierarchy = "received_at"
    list_select_related = ("model_a", "model_b")
    show_full_result_count = False
    actions = ["exclude_battles", "restore_battles", "release_battles"]
    change_list_template = "admin/ingest/battle/change_list.html"

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest) -> bool:
        # Links from anomaly reports and the user column filter by these exact ids.
        return lookup in ("user_hash", "ip_hash") or super().lookup_allowed(lookup, value, request)

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        # ?hidden_models=1 lists hidden models in the "involves model" filter; it is not a
        # field lookup, so it must not reach the queryset.
        setattr(request, _HIDDEN_MODELS, request.GET.get("hidden_models") == "1")
        query = request.GET.copy()
        query.pop("hidden_models", None)
        # The stubs type GET as immutable; the change list only reads it.
        request.GET = query  # type: ignore[assignment]
        return super().get_changelist(request, **kwargs)

    @admin.display(description="user")
    def user(self, obj: Battle) -> str:
        """A short pseudonym: all of this user's battles, and excluding them."""
        if not obj.user_hash:
            return "(none)"
        battles = reverse("admin:ingest_battle_changelist")
        exclude = reverse("admin:ingest_battle_moderate_user")
        return format_html(
            '<a href="{}?user_hash={}" title="All battles of this user">{}</a> '
            '<a href="{}?user_hash={}">(exclude)</a>',
            battles,
            obj.user_hash,
            obj.user_hash[:8],
            exclude,
            obj.user_hash,
        )

    def has_moderate_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("ingest.moderate_battle"))

    def _set(
        self, request: HttpRequest, queryset: QuerySet[Battle], *, exclude: bool
    ) -> TemplateResponse | None:
        verb = "Exclude" if exclude else "Restore"

        def apply(qs: QuerySet[Battle], reason: str) -> int:
            n = set_excluded(
                battles=qs,
                exclude=exclude,
                reason=reason,
                actor=request.user,
                target=f"{qs.count()} selected battle(s)",
            )
            if n:
                self.board_changed(request, what=f"{verb.lower()}d {n} battle(s)")
            return n

        return reason_action(
            self,
            request,
            queryset,
            title=f"{verb} battles",
            apply=apply,
            done=f"{verb}d {{n}} battle(s).",
            confirm_over=CONFIRM_COUNT_OVER,
        )

    @admin.action(description="Exclude selected battles (with a reason)", permissions=["moderate"])
    def exclude_battles(
        self, request: HttpRequest, queryset: QuerySet[Battle]
    ) -> TemplateResponse | None:
        return self._set(request, queryset, exclude=True)

    @admin.action(description="Restore selected battles (with a reason)", permissions=["moderate"])
    def restore_battles(
        self, request: HttpRequest, queryset: QuerySet[Battle]
    ) -> TemplateResponse | None:
        return self._set(request, queryset, exclude=False)

    @admin.action(
        description="Release selected held battles: count them again (with a reason)",
        permissions=["moderate"],
    )
    def release_battles(
        self, request: HttpRequest, queryset: QuerySet[Battle]
    ) -> TemplateResponse | None:
        return reason_action(
            self,
            request,
            queryset,
            title="Release held battles",
            apply=lambda qs, reason: release_battles(
                battles=qs,
                reason=reason,
                actor=request.user,
                target=f"{qs.count()} selected battle(s)",
            ),
            done="Released {n} held battle(s). They return to the board at the next recompute.",
        )

    def get_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view
        return [
            path("moderate-user/", view(self.moderate_user), name="ingest_battle_moderate_user"),
            path("moderate-range/", view(self.moderate_range), name="ingest_battle_moderate_range"),
            *super().get_urls(),
        ]

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra = {"can_moderate": self.has_moderate_permission(request)}
        return super().changelist_view(request, {**(extra_context or {}), **extra})

    def _moderation_form(
        self,
        request: HttpRequest,
        form_class: type[_ModerationForm],
        title: str,
        intro: str,
    ) -> HttpResponse:
        if not self.has_moderate_permission(request):
            raise PermissionDenied
        # A link (the battle list's user column) may fill the form in; only a POST acts.
        form = form_class(request.POST or None, initial=request.GET.dict())
        if request.method == "POST" and form.is_valid():
            try:
                n = form.apply(actor=request.user)
            except ActionRefused as exc:
                form.add_error(None, str(exc))
            else:
                if n:
                    self.board_changed(request, what=f"{n} battle(s) changed")
                self.message_user(request, f"{n} battle(s) changed.", messages.SUCCESS)
                return redirect(reverse("admin:ingest_battle_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "title": title,
            "intro": intro,
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "moderation/form.html", context)

    def moderate_user(self, request: HttpRequest) -> HttpResponse:
        return self._moderation_form(
            request,
            UserModerationForm,
            "Exclude or restore all battles of a user",
            "Users are known only by their pseudonymised id (shown on battles and anomaly reports).",
        )

    def moderate_range(self, request: HttpRequest) -> HttpResponse:
        return self._moderation_form(
            request,
            RangeModerationForm,
            "Exclude or restore all battles in a time range",
            "Every battle received in [start, end) changes state.",
        )


@admin.register(AnomalyReport)
class AnomalyReportAdmin(BoardNoteAdmin, admin.ModelAdmin[AnomalyReport]):
    list_display = (
        "rule",
        "subject_kind",
        "short_subject",
        "battles",
        "held",
        "figures",
        "status",
        "last_seen",
        "resolved_by",
    )
    list_filter = ("status", "rule", "subject_kind")
    search_fields = ("subject",)
    readonly_fields = [f.name for f in AnomalyReport._meta.fields]
    actions = ["exclude_battles", "dismiss"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: AnomalyReport | None = None) -> bool:
        return False

    @admin.display(description="subject")
    def short_subject(self, obj: AnomalyReport) -> str:
        url = reverse("admin:ingest_battle_changelist")
        key = {"user": "user_hash", "ip": "ip_hash"}.get(obj.subject_kind, "pair_id")
        return format_html('<a href="{}?{}={}">{}…</a>', url, key, obj.subject, obj.subject[:16])

    @admin.display(description="figures")
    def figures(self, obj: AnomalyReport) -> str:
        return ", ".join(f"{k}={v}" for k, v in obj.detail.items() if k != "window")

    def _resolve(
        self,
        request: HttpRequest,
        queryset: QuerySet[AnomalyReport],
        *,
        exclude: bool,
        title: str,
        done: str,
    ) -> TemplateResponse | None:
        """Resolve the open reports among the selection; count battles (exclude) or reports."""

        def apply(qs: QuerySet[AnomalyReport], reason: str) -> int:
            total = 0
            for report in qs.filter(status=AnomalyReport.Status.OPEN):
                changed = resolve_report(
                    report=report, exclude=exclude, reason=reason, actor=request.user
                )
                total += changed if exclude else 1
            if exclude and total:
                self.board_changed(request, what=f"excluded {total} reported battle(s)")
            return total

        return reason_action(self, request, queryset, title=title, apply=apply, done=done)

    @admin.action(description="Exclude the battles of the selected reports", permissions=["change"])
    def exclude_battles(
        self, request: HttpRequest, queryset: QuerySet[AnomalyReport]
    ) -> TemplateResponse | None:
        return self._resolve(
            request,
            queryset,
            exclude=True,
            title="Exclude the battles of these reports",
            done="Excluded {n} battle(s).",
        )

    @admin.action(
        description="Dismiss the selected reports and release the votes they held",
        permissions=["change"],
    )
    def dismiss(
        self, request: HttpRequest, queryset: QuerySet[AnomalyReport]
    ) -> TemplateResponse | None:
        return self._resolve(
            request,
            queryset,
            exclude=False,
            title="Dismiss these reports and release the votes they held",
            done="Dismissed {n} report(s); their held votes count again at the next recompute.",
        )
