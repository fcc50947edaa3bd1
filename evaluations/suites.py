"""Each suite's items, how one item of a stored run is executed, and how a run is summarised.

The scoring is the pure modules' (``humaneval``, ``infilling``, ``judge``, ``judge_stats``);
this module only binds them to a stored run:

* `item_keys`: the problems or questions a run covers, in order (the first ``limit``);
* `prepare(run)`: the run's callers (`client.Caller` over the stored provider settings),
  its sandbox limits and its data, as a `Prepared` whose ``execute(key)`` scores one item
  and never raises (a failure is an `Outcome` saying so);
(`summaries.summarize` turns the stored items into the run's score and summary.)

The infilling suite asks the model exactly as ``/create_pair`` does, through
``serving.prompts`` itself: chat providers get the snippet-and-trim prompt, native FiM
providers (``openai_completion``, ``mistral_fim``) their FiM endpoint with prefix and suffix;
the answer is cleaned up by the same ``serving.prompts.clean_completion``. Generation is
greedy (temperature 0) for all suites.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from serving import prompts as serving_prompts

from . import humaneval as he
from . import infilling as inf
from . import judge as jd
from .client import Caller, endpoint, generation
from .models import BaselineAnswer, EvaluationRun, Question, Suite
from .questions import JudgeQuestion
from .sandbox import Isolation, Limits, SandboxConfig

log = logging.getLogger(__name__)

HUMANEVAL_DATASET = "HumanEval"
INFILLING_SETS = tuple(inf.SETS)
INTERRUPTED = "interrupted"
ERROR = "error"
NOT_JUDGED = "not_judged"
# Outcomes that mean the item could not be scored properly (counted in the run's `errors`).
FAILED_OUTCOMES = frozenset({he.PROVIDER_ERROR, NOT_JUDGED, INTERRUPTED, ERROR})
# Completion settings of the infilling suite: /create_pair's default length, greedy.
INFILL_MAX_TOKENS = 512
ANSWER_GENERATION = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 4096}


@dataclass(frozen=True)
class Outcome:
    """One executed item, ready to be stored on its `EvaluationItem`."""

    outcome: str
    passed: bool | None = None
    well_formatted: bool | None = None
    score: float | None = None
    raw_output: str = ""
    extracted: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    latency_s: float | None = None
    duration_s: float | None = None
    error: str = ""


@functools.cache
def _humaneval() -> dict[str, he.Problem]:
    return {p.task_id: p for p in he.load_problems()}


@functools.cache
def _infilling(which: str) -> dict[str, inf.InfillProblem]:
    return {p.task_id: p for p in inf.load_problems(which)}


def item_keys(*, suite: str, dataset: str, limit: int | None) -> list[str]:
    if suite == Suite.HUMANEVAL:
        keys = list(_humaneval())
    elif suite == Suite.INFILLING:
        keys = list(_infilling(dataset))
    else:
        keys = list(
            Question.objects.filter(question_set__name=dataset)
            .order_by("position")
            .values_list("question_id", flat=True)
        )
    return keys[:limit] if limit else keys


def sandbox_request() -> dict[str, Any]:
    """The sandbox limits and isolation a new run asks for (from settings)."""
    return {
        "isolation": settings.EVALUATION_SANDBOX_ISOLATION,
        "cpu_seconds": settings.EVALUATION_SANDBOX_CPU_SECONDS,
        "wall_seconds": settings.EVALUATION_SANDBOX_WALL_SECONDS,
        "memory_bytes": settings.EVALUATION_SANDBOX_MEMORY_MB << 20,
    }


def sandbox_of(stored: dict[str, Any]) -> tuple[Limits, SandboxConfig]:
    limits = Limits(
        cpu_seconds=int(stored.get("cpu_seconds", Limits.cpu_seconds)),
        wall_seconds=float(stored.get("wall_seconds", Limits.wall_seconds)),
        memory_bytes=int(stored.get("memory_bytes", Limits.memory_bytes)),
    )
    # Runs stored before bubblewrap asked for auto, namespaces or user-namespaces: isolated.
    isolation: Isolation = "none" if stored.get("isolation") == "none" else "bwrap"
    return limits, SandboxConfig(isolation=isolation, bwrap=settings.EVALUATION_SANDBOX_BWRAP)


def prompt_identity(*, suite: str, chat: bool) -> tuple[str, str]:
    """(version, fingerprint) of the prompt a run of ``suite`` sends."""
    if suite == Suite.HUMANEVAL:
        return he.PROMPT_VERSION, ""
    if suite == Suite.INFILLING:
        version = "create_pair-chat-snippet" if chat else "create_pair-native-fim"
        return version, inf.prompt_fingerprint(chat=chat, prompts=serving_prompts)
    return jd.PROMPT_VERSION, ""


def run_generation(*, suite: str) -> dict[str, Any]:
    if suite == Suite.HUMANEVAL:
        return dict(he.GENERATION)
    if suite == Suite.INFILLING:
        tokens = min(INFILL_MAX_TOKENS, settings.SERVING_MAX_OUTPUT_TOKENS)
        return {"temperature": 0.0, "top_p": 1.0, "max_tokens": tokens}
    return dict(ANSWER_GENERATION)


@dataclass
class Prepared:
    execute: Callable[[str], Outcome]


def prepare(run: EvaluationRun) -> Prepared:
    model = Caller(endpoint(run.provider_settings), generation(run.generation))
    if run.suite == Suite.HUMANEVAL:
        return Prepared(_humaneval_item(model, *sandbox_of(run.sandbox)))
    if run.suite == Suite.INFILLING:
        chat = model.target.config.is_chat
        return Prepared(_infill_item(model, run.dataset, chat, *sandbox_of(run.sandbox)))
    return Prepared(_judge_item(run, model))


def _humaneval_item(
    model: Caller, limits: Limits, config: SandboxConfig
) -> Callable[[str], Outcome]:
    problems = _humaneval()

    def execute(key: str) -> Outcome:
        r = he.run_sample(problems[key], model, limits=limits, config=config)
        return Outcome(
            outcome=r.status,
            passed=r.passed,
            raw_output=r.raw_output or "",
            extracted=r.extracted or "",
            details={"stderr_tail": r.stderr_tail} if r.stderr_tail else {},
            latency_s=r.latency_s,
            duration_s=r.duration_s,
            error=r.error or "",
        )

    return execute


def _infill_item(
    model: Caller, which: str, chat: bool, limits: Limits, config: SandboxConfig
) -> Callable[[str], Outcome]:
    problems = _infilling(which)

    def execute(key: str) -> Outcome:
        r = inf.run_item(
            problems[key], model, chat=chat, prompts=serving_prompts, limits=limits, config=config
        )
        return Outcome(
            outcome=r.status,
            passed=r.passed,
            well_formatted=r.well_formatted if r.middle is not None else None,
            raw_output=r.raw_output or "",
            extracted=r.middle or "",
            details={"issues": list(r.issues)},
            latency_s=r.latency_s,
            duration_s=r.duration_s,
            error=r.error or "",
        )

    return execute


def _game(game: jd.Game | None) -> dict[str, Any] | None:
    if game is None:
        return None
    return {
        "model_position": game.model_position,
        "verdict": game.verdict.value if game.verdict is not None else None,
        "score": game.score,
        "result": game.result,
        "attempts": game.attempts,
        "latency_s": game.latency_s,
        "error": game.error,
        "judgments": list(game.judgments),
    }


def _judge_item(run: EvaluationRun, model: Caller) -> Callable[[str], Outcome]:
    rows = {q.question_id: q for q in Question.objects.filter(question_set__name=run.dataset)}
    judge = Caller(endpoint(run.judge_settings), generation(jd.GENERATION))
    baseline_id = run.baseline_model_id
    baseline = (
        Caller(endpoint(run.baseline_settings), generation(ANSWER_GENERATION))
        if baseline_id is not None
        else None
    )

    def baseline_answer(row: Question, question: JudgeQuestion) -> tuple[str | None, str]:
        if baseline is None or baseline_id is None:
            return (row.baseline_answer or None), "the set has no baseline answer"
        stored = BaselineAnswer.objects.filter(question=row, model_id=baseline_id).first()
        if stored is not None:
            return stored.text, ""
        reply = jd.answer(baseline, question)
        if reply.text is None:
            return None, f"baseline: {reply.error}"
        text = reply.text
        try:
            with transaction.atomic():
                BaselineAnswer.objects.create(question=row, model_id=baseline_id, text=text)
        except IntegrityError:  # another lane generated it meanwhile: reuse that one
            text = BaselineAnswer.objects.get(question=row, model_id=baseline_id).text
        return text, ""

    def execute(key: str) -> Outcome:
        row = rows[key]
        question = JudgeQuestion(
            question_id=row.question_id,
            question=row.question,
            category=row.category or None,
            subtask=row.subtask or None,
            language=row.language or None,
        )
        base, why = baseline_answer(row, question)
        if base is None:
            return Outcome(NOT_JUDGED, details={"category": row.category}, error=why)
        reply = jd.answer(model, question)
        if reply.text is None:
            return Outcome(
                NOT_JUDGED,
                details={"category": row.category},
                latency_s=reply.latency_s,
                error=f"model: {reply.error}",
            )
        item = jd.judge_question(judge, question, reply.text, base)
        judged = item.judged
        assert judged is not None
        return Outcome(
            outcome=judged.outcome,
            score=judged.score,
            raw_output=reply.text,
            latency_s=reply.latency_s,
            details={
                "category": row.category,
                "baseline_answer": base,
                "game1": _game(item.game1),
                "game2": _game(item.game2),
            },
        )

    return execute
