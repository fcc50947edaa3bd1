"""Writes of the evaluations app: question sets, creating, starting, cancelling and resuming runs.

* `import_question_set` stores a CodeArena-layout file (``questions.load_questions``) as a
  `QuestionSet`, replacing an earlier import of the same name; `ensure_example_set` imports
  the shipped example set once.
* `create_run` checks what the suite needs (a chat provider for HumanEval and CodeArena, a
  judge, a baseline), copies the providers' settings, records the prompt's version and
  fingerprint and creates one pending item per problem or question; `start_run` queues the
  driver task after commit.
* `cancel_run` stops a run between items; `resume_run` queues a driver again (for a
  cancelled or failed run too: items already done stay done); `retry_errors` puts the
  items whose calls failed back in the queue; `resume_stalled` (beat, and each worker's
  start) resumes runs whose driver stopped renewing its heartbeat.
* `rescore_runs` scores finished CodeArena runs again from their stored verdicts (the
  ``rescore_evaluations`` command), after a change of the scoring rule.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from catalogue.models import ArenaModel
from serving.models import ModelProvider, ProviderKind

from .client import judge_settings, provider_settings
from .models import (
    ACTIVE_STATUSES,
    EvaluationItem,
    EvaluationRun,
    ItemState,
    JudgeEndpoint,
    Question,
    QuestionSet,
    RunStatus,
    Suite,
)
from .questions import EXAMPLE_SET, load_questions
from .suites import (
    FAILED_OUTCOMES,
    HUMANEVAL_DATASET,
    INFILLING_SETS,
    item_keys,
    prompt_identity,
    run_generation,
    sandbox_request,
)
from .summaries import stored_judgement, summarize

log = logging.getLogger(__name__)

EXAMPLE_SET_NAME = "codearena-example"


# ------------------------------------------------------------------------ question sets


def import_question_set(
    *, name: str, path: str | Path, taxonomy: str | Path | None = None
) -> QuestionSet:
    """Store every question of a JSON-lines file (raises ValueError naming a bad line)."""
    questions = load_questions(path, taxonomy=taxonomy)
    if not questions:
        raise ValueError("the file has no questions")
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    with transaction.atomic():
        qset, _ = QuestionSet.objects.update_or_create(
            name=name, defaults={"file_name": Path(path).name[:300], "file_sha256": digest}
        )
        # Baseline answers generated for the old rows go with them (they answered those).
        qset.questions.all().delete()
        Question.objects.bulk_create(
            Question(
                question_set=qset,
                position=i,
                question_id=q.question_id[:200],
                question=q.question,
                category=(q.category or "")[:200],
                subtask=(q.subtask or "")[:200],
                language=(q.language or "")[:60],
                difficulty=(q.difficulty or "")[:60],
                baseline_answer=q.baseline_answer or "",
            )
            for i, q in enumerate(questions)
        )
    return qset


def ensure_example_set() -> QuestionSet:
    existing = QuestionSet.objects.filter(name=EXAMPLE_SET_NAME).first()
    return existing or import_question_set(name=EXAMPLE_SET_NAME, path=EXAMPLE_SET)


# ------------------------------------------------------------------------------ runs


def _provider(model: ArenaModel, *, role: str, chat: bool) -> ModelProvider:
    provider = ModelProvider.objects.filter(model=model).first()
    if provider is None:
        raise ValidationError(f"{role} {model.key} has no provider (add one under Pair serving).")
    if chat and provider.kind != ProviderKind.OPENAI_CHAT:
        raise ValidationError(
            f"{role} {model.key} needs an OpenAI-compatible chat provider for this suite "
            f"(its provider is {provider.kind})."
        )
    return provider


def default_dataset(suite: str) -> str:
    if suite == Suite.HUMANEVAL:
        return HUMANEVAL_DATASET
    if suite == Suite.INFILLING:
        return "random-span-light"
    return EXAMPLE_SET_NAME


def _judge(judge_model: ArenaModel | None, judge_endpoint: JudgeEndpoint | None) -> dict[str, Any]:
    if (judge_model is None) == (judge_endpoint is None):
        raise ValidationError("Choose a judge: a catalogue model or a judge endpoint (one).")
    if judge_model is not None:
        stored = provider_settings(_provider(judge_model, role="Judge", chat=True))
        return {**stored, "label": judge_model.key}
    assert judge_endpoint is not None
    return {**judge_settings(judge_endpoint), "label": judge_endpoint.name}


def create_run(
    *,
    suite: str,
    model: ArenaModel,
    dataset: str | None = None,
    judge_model: ArenaModel | None = None,
    judge_endpoint: JudgeEndpoint | None = None,
    baseline_model: ArenaModel | None = None,
    limit: int | None = None,
    concurrency: int | None = None,
    created_by: str = "",
) -> EvaluationRun:
    """A queued run with its items (raises ValidationError saying what is missing)."""
    if suite not in Suite.values:
        raise ValidationError(f"Unknown suite {suite!r}.")
    dataset = dataset or default_dataset(suite)
    provider = _provider(model, role="Model", chat=suite != Suite.INFILLING)
    extra: dict[str, Any] = {}
    if suite == Suite.INFILLING and dataset not in INFILLING_SETS:
        raise ValidationError(f"Unknown infilling set {dataset!r}: one of {INFILLING_SETS}.")
    if suite == Suite.HUMANEVAL and dataset != HUMANEVAL_DATASET:
        raise ValidationError(f"The HumanEval suite has one dataset, {HUMANEVAL_DATASET}.")
    if suite == Suite.CODEARENA:
        if dataset == EXAMPLE_SET_NAME:
            ensure_example_set()
        if not QuestionSet.objects.filter(name=dataset).exists():
            raise ValidationError(f"No question set named {dataset!r} (import one first).")
        extra["judge_model"], extra["judge_endpoint"] = judge_model, judge_endpoint
        extra["judge_settings"] = _judge(judge_model, judge_endpoint)
        if baseline_model is not None:
            stored = provider_settings(_provider(baseline_model, role="Baseline", chat=True))
            extra["baseline_model"] = baseline_model
            extra["baseline_settings"] = {**stored, "label": baseline_model.key}
    keys = item_keys(suite=suite, dataset=dataset, limit=limit)
    if not keys:
        raise ValidationError("The dataset has no items.")
    if suite == Suite.CODEARENA and baseline_model is None:
        lacking = Question.objects.filter(
            question_set__name=dataset, question_id__in=keys, baseline_answer=""
        ).count()
        if lacking:
            raise ValidationError(
                f"{lacking} questions of {dataset} have no baseline answer: choose a baseline model."
            )
    version, fingerprint = prompt_identity(
        suite=suite, chat=provider.kind == ProviderKind.OPENAI_CHAT
    )
    with transaction.atomic():
        run = EvaluationRun.objects.create(
            suite=suite,
            dataset=dataset,
            model=model,
            provider=provider,
            provider_settings={**provider_settings(provider), "label": model.key},
            generation=run_generation(suite=suite),
            prompt_version=version,
            prompt_fingerprint=fingerprint,
            sandbox=sandbox_request() if suite != Suite.CODEARENA else {},
            item_limit=limit or None,
            concurrency=concurrency or settings.EVALUATION_CONCURRENCY,
            total=len(keys),
            created_by=created_by[:150],
            **extra,
        )
        EvaluationItem.objects.bulk_create(
            (EvaluationItem(run=run, position=i, item_key=key) for i, key in enumerate(keys)),
            batch_size=2000,
        )
    return run


def _enqueue(run_id: int) -> None:
    from .tasks import run_evaluation

    def send() -> None:
        try:
            run_evaluation.delay(run_id)
        except Exception:  # the beat's resume_stalled picks the run up later
            log.exception("Could not queue evaluation run %s", run_id)

    transaction.on_commit(send)


def start_run(run: EvaluationRun) -> None:
    """Queue the run's driver once the current transaction commits."""
    _enqueue(run.pk)


def cancel_run(run: EvaluationRun) -> bool:
    """Stop a queued or running run between items (items in hand finish and are kept)."""
    return bool(
        EvaluationRun.objects.filter(pk=run.pk, status__in=ACTIVE_STATUSES).update(
            status=RunStatus.CANCELLED, finished_at=Coalesce(F("finished_at"), timezone.now())
        )
    )


def refresh_counts(run_id: int) -> None:
    """Recount done and failed items from the items themselves."""
    counts = EvaluationItem.objects.filter(run_id=run_id).aggregate(
        done=Count("id", filter=Q(state=ItemState.DONE)),
        errors=Count("id", filter=Q(state=ItemState.DONE, outcome__in=FAILED_OUTCOMES)),
    )
    EvaluationRun.objects.filter(pk=run_id).update(**counts)


def resume_run(run: EvaluationRun) -> bool:
    """Queue a driver for the run; a cancelled, failed or done run is reopened first if it
    has items left. False when there is nothing to do.

    A run that never finished loses the time it stopped; one that did (it has a summary:
    failed items are being retried) keeps its ``finished_at``."""
    left = EvaluationItem.objects.filter(run=run).exclude(state=ItemState.DONE).exists()
    if run.status in (RunStatus.CANCELLED, RunStatus.FAILED, RunStatus.DONE):
        if not left:
            return False
        reopen: dict[str, Any] = {"status": RunStatus.QUEUED, "error": ""}
        if not run.summary:
            reopen["finished_at"] = None
        EvaluationRun.objects.filter(pk=run.pk).update(**reopen)
    _enqueue(run.pk)
    return True


def retry_errors(run: EvaluationRun) -> int:
    """Put the items whose calls failed (or were interrupted) back in the queue."""
    with transaction.atomic():
        n = EvaluationItem.objects.filter(
            run=run, state=ItemState.DONE, outcome__in=FAILED_OUTCOMES
        ).update(state=ItemState.PENDING, outcome="", attempts=0, error="", finished_at=None)
        refresh_counts(run.pk)
    if n:
        resume_run(EvaluationRun.objects.get(pk=run.pk))
    return n


def rescore_runs(*, run_ids: list[int] | None = None) -> list[EvaluationRun]:
    """Score finished CodeArena runs again from their stored verdicts, with the current rule
    (items' score and outcome, the run's score and summary), and publish their boards again.
    Nothing is asked of any model. ``run_ids``: only these (default: every finished one)."""
    from .publish import publish_run, release_of

    runs = EvaluationRun.objects.filter(suite=Suite.CODEARENA, status=RunStatus.DONE)
    if run_ids is not None:
        runs = runs.filter(pk__in=run_ids)
    rescored = []
    for run in runs.select_related("model").order_by("pk"):
        with transaction.atomic():
            items = list(run.items.select_for_update().order_by("position"))
            changed = []
            for item in items:
                judged = stored_judgement(item).judged
                if judged is not None:
                    item.score, item.outcome = judged.score, judged.outcome
                    changed.append(item)
            EvaluationItem.objects.bulk_update(changed, ["score", "outcome"])
            run.score, run.summary = summarize(run, items)
            run.rescored_at = timezone.now()
            run.save(update_fields=["score", "summary", "rescored_at"])
        rescored.append(run)
    boards = {(run.suite, run.dataset, run.item_limit, release_of(run)): run for run in rescored}
    for run in boards.values():
        publish_run(run)
    return rescored


def resume_stalled() -> list[int]:
    """Queue a driver for every run whose driver stopped renewing its heartbeat."""
    cutoff = timezone.now() - timedelta(seconds=float(settings.EVALUATION_LEASE_SECONDS))
    # A queued run still waiting behind other tasks may get a second message: harmless,
    # two drivers share a run's items.
    stalled = list(
        EvaluationRun.objects.filter(status__in=ACTIVE_STATUSES, created_at__lt=cutoff)
        .filter(Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=cutoff))
        .values_list("pk", flat=True)
    )
    for run_id in stalled:
        log.info("Resuming evaluation run %s (no heartbeat for a lease)", run_id)
        _enqueue(run_id)
    return stalled
