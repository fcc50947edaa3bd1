"""Reads of the evaluations app: a model's latest results, the FiM check report, the public guard.

* `latest_runs(model)`: the newest finished run of each suite and dataset for one model
  (the model's admin page shows them);
* `fim_report()`: per model and infilling set, the latest finished run's well-formatted
  rate, pass@1 and issue counts, next to Copilot Arena's Table 2 (`COPILOT_ARENA_TABLE2`);
* `public_check(model, visibility)`: what making ``model`` public would mean given its
  latest fill-in-the-middle check on ``EVALUATION_GUARD_SET`` -- nothing, a warning, or
  (``EVALUATION_BLOCK_PUBLIC``) a refusal when its well-formatted rate is below
  ``EVALUATION_MIN_WELL_FORMATTED``. A model never checked gets a warning only.
* `sandbox_state()`: the configured sandbox isolation as this process finds it (the admin
  shows it; each worker checks again when it starts a run and refuses the run without it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from catalogue.models import ArenaModel, Visibility

from .models import EvaluationRun, RunStatus, Suite
from .sandbox import SETTING, isolation_report, refusal
from .suites import sandbox_of, sandbox_request
from .wellformed import ISSUES

# Copilot Arena's Table 2 (blog post of 2024-11-12): share of well-formatted completions of
# chat models on HumanEval-infilling, PSM template; "plain" prompting and the gain of their
# snippet prompting (the arena's chat prompt is of the snippet kind: compare with the sum).
COPILOT_ARENA_TABLE2 = (
    ("Claude-3.5-sonnet", 0.67, 0.16),
    ("GPT-4o-2024-08-06", 0.71, 0.02),
    ("GPT-4o-mini", 0.18, 0.39),
    ("Gemini-1.5-pro-001", 0.38, 0.28),
    ("Gemini-1.5-flash-001", 0.34, 0.24),
    ("Llama-3.1-70B-Instruct", 0.14, 0.46),
)


def latest_runs(model: ArenaModel) -> list[EvaluationRun]:
    """The newest finished run per (suite, dataset) of ``model``, suites in a fixed order."""
    seen: dict[tuple[str, str], EvaluationRun] = {}
    for run in EvaluationRun.objects.filter(model=model, status=RunStatus.DONE).order_by(
        "-finished_at", "-id"
    ):
        seen.setdefault((run.suite, run.dataset), run)
    order = {s: i for i, s in enumerate(Suite.values)}
    return sorted(seen.values(), key=lambda r: (order[r.suite], r.dataset))


def recent_runs(model: ArenaModel, limit: int = 10) -> list[EvaluationRun]:
    return list(EvaluationRun.objects.filter(model=model).order_by("-id")[:limit])


def fim_report() -> list[dict[str, Any]]:
    """One row per (model, infilling set): the latest finished run's figures."""
    rows: dict[tuple[int, str], dict[str, Any]] = {}
    runs = (
        EvaluationRun.objects.filter(suite=Suite.INFILLING, status=RunStatus.DONE)
        .select_related("model")
        .order_by("-finished_at", "-id")
    )
    for run in runs:
        key = (run.model_id, run.dataset)
        if key in rows:
            continue
        summary = run.summary
        rate = summary.get("well_formatted_rate")
        rows[key] = {
            "run": run,
            "model": run.model,
            "set": run.dataset,
            "template": summary.get("template", ""),
            "fingerprint": run.prompt_fingerprint,
            "items": summary.get("n", run.total),
            "answered": summary.get("answered"),
            "well_formatted": rate,
            "pass_at_1": summary.get("pass_at_1"),
            "issues": [summary.get("issues", {}).get(name, 0) for name in ISSUES],
            "below_threshold": rate is not None
            and rate < 100.0 * settings.EVALUATION_MIN_WELL_FORMATTED,
        }
    return sorted(rows.values(), key=lambda r: (r["set"], -(r["well_formatted"] or 0.0)))


def copilot_arena_rows() -> list[dict[str, Any]]:
    """Their shares as percentages, like the arena's own rows."""
    return [
        {"model": name, "plain": 100 * plain, "gain": 100 * gain, "snippet": 100 * (plain + gain)}
        for name, plain, gain in COPILOT_ARENA_TABLE2
    ]


@dataclass(frozen=True)
class PublicCheck:
    message: str
    block: bool


def latest_fim_check(model: ArenaModel) -> EvaluationRun | None:
    return (
        EvaluationRun.objects.filter(
            model=model,
            suite=Suite.INFILLING,
            dataset=settings.EVALUATION_GUARD_SET,
            status=RunStatus.DONE,
        )
        .order_by("-finished_at", "-id")
        .first()
    )


def public_check(model: ArenaModel, visibility: str | None) -> PublicCheck | None:
    """None when nothing is to be said about giving ``model`` this visibility."""
    if visibility != Visibility.PUBLIC:
        return None
    if model.pk is not None:
        stored = ArenaModel.objects.filter(pk=model.pk).values_list("visibility", flat=True)
        if stored.first() == Visibility.PUBLIC:
            return None  # already public: not a change
    threshold = 100.0 * float(settings.EVALUATION_MIN_WELL_FORMATTED)
    run = latest_fim_check(model) if model.pk is not None else None
    if run is None:
        return PublicCheck(
            f"{model.key or 'This model'} is made public without a fill-in-the-middle check on "
            f"{settings.EVALUATION_GUARD_SET}: run HumanEval-infilling from its page "
            "(Evaluate) to see whether its completions are insertable.",
            block=False,
        )
    rate = run.summary.get("well_formatted_rate")
    if rate is None or rate >= threshold:
        return None
    return PublicCheck(
        f"{model.key}'s well-formatted rate is {rate:.1f}% on {run.summary.get('answered')} "
        f"answered items of {run.dataset} (run #{run.pk}), below the threshold of "
        f"{threshold:.0f}% (EVALUATION_MIN_WELL_FORMATTED): many of its completions would "
        "not be insertable as served.",
        block=bool(settings.EVALUATION_BLOCK_PUBLIC),
    )


def sandbox_state() -> dict[str, Any]:
    """``setting``, ``mode``, ``available``, and ``message``: what runs of the sandboxed suites
    will get here, or why they are refused and how to opt out."""
    report = isolation_report(sandbox_of(sandbox_request())[1])
    if not report.available:
        message = (
            f"unavailable here, so HumanEval and infilling runs are refused: {refusal(report.why)}"
        )
    elif report.mode == "none":
        message = "turned off by the operator: " + "; ".join(report.limitations)
    else:
        message = "bubblewrap isolates every program (no network, no host files or processes)"
    return {
        "setting": f"{SETTING}={report.mode}",
        "mode": report.mode,
        "available": report.available,
        "message": message,
    }
