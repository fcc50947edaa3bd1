"""HumanEval-infilling through the arena's own fill-in-the-middle path: pass@1 and well-formatted rate.

Each problem is a file with a hole: ``prompt`` (before), ``suffix`` (after), the reference
``canonical_solution`` and a ``test``. The data is in ``arena_site/data/benchmarks/humaneval-infilling/``
(MIT; sources in its SOURCES.md): `SETS` names the single-line (1,033), random-span-light
(164) and multi-line (5,815) sets.

A request is built exactly as ``/create_pair`` builds one (``serving.services.create_pair``):

1. ``analysis.fim.trim_context(prefix, suffix)`` -- here a no-op for HumanEval's short files,
   kept so that a change of budget is measured too;
2. ``prompts.completion_prompt(chat=..., prefix=..., suffix=...)``;
3. the provider call (the caller's ``complete``);
4. ``prompts.clean_completion(raw, chat=..., prefix=..., suffix=..., max_lines=...)``.

``prompts`` is any object with those two functions, i.e. the module ``serving.prompts``.
That module imports Django models (through ``serving.providers``), so this pure module cannot
import it; `CHAT_PROMPTS` is the Django-free equivalent for chat models, calling the same
``analysis.fim`` and ``analysis.fim_cleanup`` functions ``serving.prompts`` calls (``build_chat_prompt``,
``clean_chat_completion`` with the default stop words); native FiM models need
``serving.prompts`` itself. ``max_lines`` defaults to no limit: the hole's length is the
benchmark's, and a line cap would count as a formatting failure what is only a cut.

Scores per item: the middle is well-formatted (``evaluations.wellformed``) and it passes
(``prompt + middle + suffix + test + check(entry_point)`` passes in the sandbox).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from analysis.fim import STOP_WORDS, build_chat_prompt, trim_context
from analysis.fim_cleanup import clean_chat_completion
from analysis.pass_at_k import greedy_pass_at_1

from .calls import call, map_items
from .sandbox import DEFAULT_CONFIG, DEFAULT_LIMITS, Limits, SandboxConfig, ScoredAnswer, run_python
from .wellformed import ISSUES, format_issues

DATA_DIR = (
    Path(__file__).resolve().parent.parent
    / "arena_site"
    / "data"
    / "benchmarks"
    / "humaneval-infilling"
)
SETS = {
    "single-line": "HumanEval-SingleLineInfilling.jsonl.gz",
    "random-span-light": "HumanEval-RandomSpanInfillingLight.jsonl.gz",
    "multi-line": "HumanEval-MultiLineInfilling.jsonl.gz",
}
PROVIDER_ERROR = "provider_error"
# A fixed file with a hole, used to fingerprint the prompt building (see prompt_fingerprint).
_PROBE = ("def f(x):\n    y = ", "\n    return y\n")


@dataclass(frozen=True)
class InfillProblem:
    task_id: str
    entry_point: str
    prompt: str  # the text before the hole
    suffix: str
    canonical_solution: str
    test: str


def load_problems(which: str | Path = "random-span-light") -> list[InfillProblem]:
    """One set by name (a key of `SETS`) or any file of the same format."""
    path = DATA_DIR / SETS[which] if isinstance(which, str) and which in SETS else Path(which)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [
            InfillProblem(
                task_id=row["task_id"],
                entry_point=row["entry_point"],
                prompt=row["prompt"],
                suffix=row["suffix"],
                canonical_solution=row["canonical_solution"],
                test=row["test"],
            )
            for row in map(json.loads, filter(str.strip, handle))
        ]


class FimPrompts(Protocol):
    """What ``serving.prompts`` provides (and `CHAT_PROMPTS` for chat models only)."""

    def completion_prompt(self, *, chat: bool, prefix: str, suffix: str) -> Any: ...

    def clean_completion(
        self, raw: str, *, chat: bool, prefix: str, suffix: str, max_lines: int | None
    ) -> str: ...


class ChatFimPrompts:
    """``serving.prompts``' chat path without Django: the same ``analysis.fim`` calls."""

    def completion_prompt(self, *, chat: bool, prefix: str, suffix: str) -> Any:
        if not chat:
            raise NotImplementedError("native FiM requests need serving.prompts")
        return build_chat_prompt(prefix, suffix)

    def clean_completion(
        self, raw: str, *, chat: bool, prefix: str, suffix: str, max_lines: int | None
    ) -> str:
        if not chat:
            raise NotImplementedError("native FiM clean-up needs serving.prompts")
        return clean_chat_completion(
            raw, prefix=prefix, suffix=suffix, max_lines=max_lines, stop=STOP_WORDS
        )


CHAT_PROMPTS = ChatFimPrompts()


@dataclass(frozen=True)
class FimRequest:
    """What is sent for one problem: the trimmed context and the provider request."""

    prefix: str
    suffix: str
    prompt: Any  # serving.providers.Prompt, or analysis.fim.ChatFimPrompt


def build_request(
    problem: InfillProblem, *, chat: bool, prompts: FimPrompts = CHAT_PROMPTS
) -> FimRequest:
    prefix, suffix = trim_context(problem.prompt, problem.suffix)
    return FimRequest(
        prefix, suffix, prompts.completion_prompt(chat=chat, prefix=prefix, suffix=suffix)
    )


def prompt_fingerprint(*, chat: bool, prompts: FimPrompts = CHAT_PROMPTS) -> str:
    """A short hash of the request built for a fixed file: changes whenever prompt building
    does, so a run can record which template version it measured."""
    built = prompts.completion_prompt(chat=chat, prefix=_PROBE[0], suffix=_PROBE[1])
    # Fields, not the object: serving's Prompt and analysis.fim's ChatFimPrompt hold the same.
    content = {
        "messages": [dict(m) for m in getattr(built, "messages", ())],
        "prefix": getattr(built, "prefix", ""),
        "suffix": getattr(built, "suffix", ""),
        "stop": list(getattr(built, "stop", ())),
    }
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:12]


def build_program(problem: InfillProblem, middle: str) -> str:
    return f"{problem.prompt}{middle}{problem.suffix}\n{problem.test}\n\ncheck({problem.entry_point})\n"


@dataclass(frozen=True)
class InfillResult(ScoredAnswer):
    """One answer cleaned up and run (``status``: a sandbox Status value or PROVIDER_ERROR)."""

    middle: str | None
    issues: tuple[str, ...] = ()
    latency_s: float | None = None
    duration_s: float | None = None
    error: str | None = None

    @property
    def well_formatted(self) -> bool:
        return self.middle is not None and not self.issues


def score_completion(
    problem: InfillProblem,
    raw_output: str,
    *,
    chat: bool,
    prompts: FimPrompts = CHAT_PROMPTS,
    max_lines: int | None = None,
    limits: Limits = DEFAULT_LIMITS,
    config: SandboxConfig = DEFAULT_CONFIG,
    latency_s: float | None = None,
) -> InfillResult:
    """Clean up a raw answer as ``/create_pair`` would, check its format, run the tests."""
    prefix, suffix = trim_context(problem.prompt, problem.suffix)
    middle = prompts.clean_completion(
        raw_output, chat=chat, prefix=prefix, suffix=suffix, max_lines=max_lines
    )
    issues = format_issues(
        middle, prefix=problem.prompt, suffix=problem.suffix, reference=problem.canonical_solution
    )
    result = run_python(build_program(problem, middle), limits=limits, config=config)
    return InfillResult(
        task_id=problem.task_id,
        raw_output=raw_output,
        middle=middle,
        issues=issues,
        latency_s=latency_s,
        **result.outcome(),
    )


def run_item(
    problem: InfillProblem,
    complete: Callable[[Any], str],
    *,
    chat: bool,
    prompts: FimPrompts = CHAT_PROMPTS,
    max_lines: int | None = None,
    limits: Limits = DEFAULT_LIMITS,
    config: SandboxConfig = DEFAULT_CONFIG,
) -> InfillResult:
    """Build the request, send it through ``complete``, score the answer."""
    request = build_request(problem, chat=chat, prompts=prompts)
    answer = call(complete, request.prompt)
    if answer.text is None:
        return InfillResult(
            problem.task_id,
            PROVIDER_ERROR,
            None,
            None,
            latency_s=answer.latency_s,
            error=answer.error,
        )
    return score_completion(
        problem,
        answer.text,
        chat=chat,
        prompts=prompts,
        max_lines=max_lines,
        limits=limits,
        config=config,
        latency_s=answer.latency_s,
    )


@dataclass(frozen=True)
class InfillReport:
    results: tuple[InfillResult, ...]
    pass_at_1: float
    well_formatted_rate: float  # over answered items (provider errors excluded)
    issues: dict[str, int] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)


def report(results: Iterable[InfillResult]) -> InfillReport:
    items = tuple(results)
    answered = [r for r in items if r.middle is not None]
    counted = Counter(issue for r in answered for issue in r.issues)
    return InfillReport(
        results=items,
        pass_at_1=greedy_pass_at_1(r.passed for r in items),
        well_formatted_rate=(
            sum(r.well_formatted for r in answered) / len(answered) if answered else float("nan")
        ),
        issues={name: counted[name] for name in ISSUES if counted[name]},
        statuses=dict(Counter(r.status for r in items)),
    )


def run_suite(
    problems: Iterable[InfillProblem],
    complete: Callable[[Any], str],
    *,
    chat: bool,
    prompts: FimPrompts = CHAT_PROMPTS,
    max_lines: int | None = None,
    max_workers: int = 4,
    limits: Limits = DEFAULT_LIMITS,
    config: SandboxConfig = DEFAULT_CONFIG,
) -> InfillReport:
    return report(
        map_items(
            lambda p: run_item(
                p,
                complete,
                chat=chat,
                prompts=prompts,
                max_lines=max_lines,
                limits=limits,
                config=config,
            ),
            problems,
            max_workers=max_workers,
        )
    )
