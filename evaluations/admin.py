"""Admin of the evaluations: start runs, follow their progress, read results and the FiM report.

* Runs: "Add" is the start form (one model, one or more suites); the list shows progress;
  a run's page shows its summary (refreshing itself while the run is active) and links to
  its items; actions cancel, resume, retry failed items and publish the scores again.
  The list and the start form say whether the sandbox isolates programs here (or why the
  sandboxed suites' runs are refused, and the setting to opt out).
  "FiM check report" (on the list) is the per-model table comparable with Copilot Arena's
  Table 2.
* Items: read-only, filterable by run, outcome and state.
* Question sets: "Add" imports a CodeArena-layout file; the shipped example set can be
  imported with one button.
* Judge endpoints: OpenAI-compatible judges outside the catalogue.

The catalogue's model page gets its "Evaluate" button and results from
``catalogue_admin`` (imported here), which also holds the public-visibility guard.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, reverse
from django.utils.html import format_html

from core.admin_base import ChangeContextAdmin, admin_route

from . import (
    catalogue_admin,  # noqa: F401  (the model page's button, results and guard)
    services,
)
from .forms import ImportQuestionsForm, StartRunForm
from .models import (
    ACTIVE_STATUSES,
    EvaluationItem,
    EvaluationRun,
    JudgeEndpoint,
    Question,
    QuestionSet,
    Suite,
)
from .publish import publish_run
from .selectors import copilot_arena_rows, fim_report, sandbox_state
from .wellformed import ISSUES


@admin.register(EvaluationRun)
class EvaluationRunAdmin(ChangeContextAdmin[EvaluationRun]):
    list_display = (
        "id",
        "suite",
        "dataset",
        "model",
        "status",
        "progress_bar",
        "score_display",
        "errors",
        "tokens",
        "created_at",
        "finished_at",
    )
    list_display_links = ("id", "suite")
    list_filter = ("suite", "status")
    search_fields = ("model__key", "dataset")
    date_hierarchy = "created_at"
    actions = ["cancel", "resume", "retry_errors", "publish"]
    change_form_template = "admin/evaluations/evaluationrun/change_form.html"
    change_list_template = "admin/evaluations/evaluationrun/change_list.html"

    def get_readonly_fields(
        self, request: HttpRequest, obj: EvaluationRun | None = None
    ) -> list[str]:
        return [f.name for f in EvaluationRun._meta.fields]

    @admin.display(description="progress")
    def progress_bar(self, obj: EvaluationRun) -> str:
        return format_html(
            '<progress max="{}" value="{}"></progress> {}/{}',
            max(obj.total, 1),
            obj.done,
            obj.done,
            obj.total,
        )

    @admin.display(description="score (%)", ordering="score")
    def score_display(self, obj: EvaluationRun) -> str:
        return "-" if obj.score is None else f"{obj.score:.1f}"

    @admin.display(description="tokens in/out")
    def tokens(self, obj: EvaluationRun) -> str:
        if not obj.calls_with_usage:
            return "not reported"
        return f"{obj.prompt_tokens:,} / {obj.completion_tokens:,}"

    # --- starting runs -------------------------------------------------------------

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = StartRunForm(request.POST or None, initial=request.GET.dict())
        if request.method == "POST" and form.is_valid():
            runs = self._start(request, form)
            if runs:
                names = ", ".join(f"#{r.pk} {r.get_suite_display()}" for r in runs)
                self.message_user(request, f"Queued {names}.", messages.SUCCESS)
                if len(runs) == 1:
                    return redirect(
                        reverse("admin:evaluations_evaluationrun_change", args=[runs[0].pk])
                    )
                return redirect(reverse("admin:evaluations_evaluationrun_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "form": form,
            "title": "Evaluate a model",
            "sandbox": sandbox_state(),
        }
        return TemplateResponse(request, "admin/evaluations/evaluationrun/start.html", context)

    def _start(self, request: HttpRequest, form: StartRunForm) -> list[EvaluationRun]:
        data = form.cleaned_data
        qset = data.get("question_set")
        datasets = {
            Suite.HUMANEVAL: None,
            Suite.INFILLING: data["infilling_set"],
            Suite.CODEARENA: qset.name if qset else None,
        }
        try:
            with transaction.atomic():  # all suites or none
                runs = [
                    services.create_run(
                        suite=suite,
                        model=data["model"],
                        dataset=datasets[Suite(suite)],
                        judge_model=data.get("judge_model"),
                        judge_endpoint=data.get("judge_endpoint"),
                        baseline_model=data.get("baseline_model"),
                        limit=data.get("limit"),
                        concurrency=data.get("concurrency"),
                        created_by=request.user.get_username(),
                    )
                    for suite in data["suites"]
                ]
                for run in runs:
                    services.start_run(run)
        except ValidationError as exc:
            form.add_error(None, exc)
            return []
        return runs

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        context = {**(extra_context or {}), "sandbox": sandbox_state()}
        return super().changelist_view(request, context)

    # --- a run's page ----------------------------------------------------------------

    def change_context(self, request: HttpRequest, object_id: str) -> dict[str, Any]:
        run = get_object_or_404(EvaluationRun, pk=object_id)
        return {
            "run": run,
            "active": run.status in ACTIVE_STATUSES,
            "issue_names": ISSUES,
            "items_url": reverse("admin:evaluations_evaluationitem_changelist")
            + f"?run__id__exact={run.pk}",
            "show_save": False,
            "show_save_and_continue": False,
            "show_save_and_add_another": False,
        }

    # --- actions -----------------------------------------------------------------------

    @admin.action(description="Cancel selected runs (between items)", permissions=["change"])
    def cancel(self, request: HttpRequest, queryset: QuerySet[EvaluationRun]) -> None:
        n = sum(services.cancel_run(run) for run in queryset)
        self.message_user(request, f"Cancelled {n} run(s).", messages.SUCCESS)

    @admin.action(description="Resume selected runs", permissions=["change"])
    def resume(self, request: HttpRequest, queryset: QuerySet[EvaluationRun]) -> None:
        n = sum(services.resume_run(run) for run in queryset)
        self.message_user(request, f"Queued {n} run(s) again.", messages.SUCCESS)

    @admin.action(description="Retry the items whose calls failed", permissions=["change"])
    def retry_errors(self, request: HttpRequest, queryset: QuerySet[EvaluationRun]) -> None:
        n = sum(services.retry_errors(run) for run in queryset)
        self.message_user(request, f"{n} item(s) queued again.", messages.SUCCESS)

    @admin.action(description="Publish the scores again (external boards)", permissions=["change"])
    def publish(self, request: HttpRequest, queryset: QuerySet[EvaluationRun]) -> None:
        boards = 0
        for run in queryset.filter(status="done"):
            boards += len(publish_run(run).boards)
        self.message_user(request, f"Rebuilt {boards} board(s).", messages.SUCCESS)

    # --- the FiM check report ------------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        return [
            admin_route(self, "fim-report/", self.fim_report_view, "evaluations_fim_report"),
            *super().get_urls(),
        ]

    def fim_report_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        from django.conf import settings

        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Fill-in-the-middle check (HumanEval-infilling)",
            "rows": fim_report(),
            "issue_names": ISSUES,
            "reference": copilot_arena_rows(),
            "threshold": 100.0 * settings.EVALUATION_MIN_WELL_FORMATTED,
            "block": settings.EVALUATION_BLOCK_PUBLIC,
        }
        return TemplateResponse(request, "admin/evaluations/fim_report.html", context)


@admin.register(EvaluationItem)
class EvaluationItemAdmin(admin.ModelAdmin[EvaluationItem]):
    list_display = (
        "run",
        "position",
        "item_key",
        "state",
        "outcome",
        "passed",
        "well_formatted",
        "score",
        "latency_s",
        "attempts",
    )
    list_filter = ("run__suite", "state", "outcome", "passed", "well_formatted")
    search_fields = ("item_key",)
    list_select_related = ("run",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(
        self, request: HttpRequest, obj: EvaluationItem | None = None
    ) -> bool:
        return False


class QuestionInline(admin.TabularInline[Question, QuestionSet]):
    model = Question
    extra = 0
    fields = ("position", "question_id", "category", "language", "difficulty", "question")
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: QuestionSet | None = None) -> bool:
        return False


@admin.register(QuestionSet)
class QuestionSetAdmin(admin.ModelAdmin[QuestionSet]):
    list_display = ("name", "size", "file_name", "imported_at")
    readonly_fields = ("name", "file_name", "file_sha256", "imported_at")
    inlines = [QuestionInline]
    change_list_template = "admin/evaluations/questionset/change_list.html"

    @admin.display(description="questions")
    def size(self, obj: QuestionSet) -> int:
        return obj.questions.count()

    def get_urls(self) -> list[URLPattern]:
        return [
            admin_route(self, "example/", self.example_view, "evaluations_questionset_example"),
            *super().get_urls(),
        ]

    def example_view(self, request: HttpRequest) -> HttpResponse:
        if request.method != "POST" or not self.has_add_permission(request):
            raise PermissionDenied
        qset = services.ensure_example_set()
        self.message_user(request, f"{qset.name}: {qset.questions.count()} questions.")
        return redirect(reverse("admin:evaluations_questionset_changelist"))

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = ImportQuestionsForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            with tempfile.TemporaryDirectory() as tmp:
                paths = {}
                for field in ("file", "taxonomy"):
                    upload = form.cleaned_data.get(field)
                    if upload:
                        paths[field] = Path(tmp) / Path(upload.name).name
                        paths[field].write_bytes(upload.read())
                try:
                    qset = services.import_question_set(
                        name=form.cleaned_data["name"],
                        path=paths["file"],
                        taxonomy=paths.get("taxonomy"),
                    )
                except ValueError as exc:
                    form.add_error("file", str(exc))
                else:
                    n = qset.questions.count()
                    self.message_user(request, f"Imported {n} questions as {qset.name}.")
                    return redirect(reverse("admin:evaluations_questionset_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "form": form,
            "title": "Import a question set",
        }
        return TemplateResponse(request, "admin/evaluations/questionset/import.html", context)


@admin.register(JudgeEndpoint)
class JudgeEndpointAdmin(admin.ModelAdmin[JudgeEndpoint]):
    list_display = ("name", "base_url", "remote_model", "api_key_env", "max_concurrency")
