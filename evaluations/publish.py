"""Finished runs as external scores, so the correlations page includes them.

Each suite is one external source ("HumanEval pass@1 (local)", "HumanEval-infilling
(local)", "CodeArena judge (local)"). Runs are comparable when they share the suite, the
dataset, the item limit and, for CodeArena, the judge and the baseline: those make the
board's *release* (e.g. ``random-span-light, first 20``). A board holds, for every model,
its latest finished run of that kind; publishing rebuilds the whole board through
``external.services.store_boards`` (one transaction, names matched to catalogue keys,
correlations scheduled after commit), exactly as a file import would.

Values are percentages: pass@1, the well-formatted rate (infilling, its own board) and the
CodeArena win rate against the baseline.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from external.benchmark_formats import ExternalScoreRow
from external.importers import ParsedBoard
from external.models import ExternalSource, SourceKind
from external.services import ImportReport, store_boards

from .models import EvaluationRun, RunStatus, Suite


@dataclass(frozen=True)
class LocalSource:
    key: str
    name: str
    kind: str
    description: str


LOCAL_SOURCES = {
    Suite.HUMANEVAL: LocalSource(
        "local-humaneval",
        "HumanEval pass@1 (local)",
        SourceKind.STATIC,
        "Greedy pass@1 (%) on HumanEval, run here through the arena's own providers, every "
        "answer executed in the sandbox.",
    ),
    Suite.INFILLING: LocalSource(
        "local-infilling",
        "HumanEval-infilling (local)",
        SourceKind.STATIC,
        "Fill-in-the-middle through /create_pair's prompts and clean-up: pass@1 (%) and the "
        "share of well-formatted middles (%), Copilot Arena's Table 2 measure.",
    ),
    Suite.CODEARENA: LocalSource(
        "local-codearena",
        "CodeArena judge (local)",
        SourceKind.JUDGE,
        "CodeArena win rate (%) against a baseline, judged here twice per question with the "
        "order swapped: a question scores the games the model won out of two, averaged over "
        "questions.",
    ),
}


def ensure_sources() -> dict[str, ExternalSource]:
    out: dict[str, ExternalSource] = {}
    for suite, info in LOCAL_SOURCES.items():
        # update_or_create: a board published before a change of rule gets the new text.
        source, _ = ExternalSource.objects.update_or_create(
            key=info.key,
            defaults={"name": info.name, "kind": info.kind, "description": info.description},
        )
        out[suite] = source
    return out


def release_of(run: EvaluationRun) -> str:
    """What makes runs comparable, as the board's release label (at most 80 characters)."""
    parts = [run.dataset]
    if run.suite == Suite.CODEARENA:
        parts.append(f"judge {run.judge_settings.get('label', '?')}")
        baseline = run.baseline_settings.get("label") if run.baseline_settings else None
        parts.append(f"vs {baseline or 'set baseline'}")
    if run.item_limit:
        parts.append(f"first {run.item_limit}")
    return ", ".join(parts)[:80]


def metrics_of(run: EvaluationRun) -> dict[str, float | None]:
    if run.suite == Suite.INFILLING:
        return {
            "pass@1": run.summary.get("pass_at_1"),
            "well_formatted": run.summary.get("well_formatted_rate"),
        }
    if run.suite == Suite.HUMANEVAL:
        return {"pass@1": run.score}
    return {"win_rate": run.score}


def comparable_runs(run: EvaluationRun) -> list[EvaluationRun]:
    """The latest finished run of each model with the same suite and release as ``run``."""
    release = release_of(run)
    latest: dict[int, EvaluationRun] = {}
    candidates = (
        EvaluationRun.objects.filter(
            suite=run.suite, dataset=run.dataset, item_limit=run.item_limit, status=RunStatus.DONE
        )
        .select_related("model")
        .order_by("finished_at", "id")
    )
    for other in candidates:
        if release_of(other) == release:
            latest[other.model_id] = other
    return sorted(latest.values(), key=lambda r: r.model.key)


def publish_run(run: EvaluationRun) -> ImportReport:
    """Rebuild the boards ``run`` belongs to; returns external's import report."""
    source = ensure_sources()[run.suite]
    release = release_of(run)
    runs = comparable_runs(run)
    boards = []
    for metric in metrics_of(run):
        rows = []
        for other in runs:
            value = metrics_of(other)[metric]
            if value is None:
                continue
            rows.append(
                ExternalScoreRow(
                    source=source.key,
                    metric=metric,
                    model_name=other.model.key,
                    value=float(value),
                    extra={"run": other.pk, "items": other.total},
                )
            )
        if not rows:
            continue
        content = json.dumps([[r.model_name, r.value, r.extra["run"]] for r in rows])
        boards.append(
            ParsedBoard(
                source=source.key,
                metric=metric,
                release=release,
                rows=rows,
                file_name=f"evaluation runs {', '.join(str(r.extra['run']) for r in rows)}",
                file_sha256=hashlib.sha256(content.encode()).hexdigest(),
                details={
                    "suite": run.suite,
                    "prompt_version": run.prompt_version,
                    "runs": {r.model_name: r.extra["run"] for r in rows},
                },
            )
        )
    return store_boards(boards) if boards else ImportReport()
