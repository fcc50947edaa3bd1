"""Pass rates of generated code: pass@k, and the EvalPlus and MultiPL-E result files.

Scoring rules (reference README, section 7):

* **pass@k.** Per problem with ``n`` samples of which ``c`` are correct, the unbiased
  estimator is ``1 - C(n-c, k) / C(n, k)`` (= 1 when ``n - c < k``), computed as the
  product ``prod_{i=n-c+1..n} (1 - k/i)`` so no huge binomials appear; the benchmark score
  is the mean over problems. Greedy pass@1 (one sample each) is the fraction of problems
  whose sample passes.
* **EvalPlus** result files: ``{"date", "hash", "eval": {task_id: [sample, ...]}}``, each
  sample with ``base_status`` and ``plus_status`` in ``pass``/``fail``/``timeout``. Base-correct
  means ``base_status == "pass"``; plus-correct means both are ``"pass"``.
* **MultiPL-E** result files, one per problem: ``{name, language, ..., results: [{program,
  stdout, stderr, exit_code, status}]}``; a completion passes when ``status == "OK"`` and
  ``exit_code == 0``.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# ------------------------------------------------------------------------- pass@k


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one problem with ``n`` samples, ``c`` of them correct.

    ``1 - C(n-c, k) / C(n, k)``, evaluated as a product of ``k``-or-fewer factors so it
    stays exact-ish and cheap for large ``n`` (no factorials).
    """
    for name, value in (("n", n), ("c", c), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise TypeError(f"{name} must be an integer, got {value!r}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not 0 <= c <= n:
        raise ValueError(f"c must be between 0 and n={n}, got {c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and n={n}, got {k}")
    if n - c < k:
        return 1.0
    # C(n-c, k)/C(n, k) = prod_{i=n-c+1}^{n} (1 - k/i)
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1, dtype=float)))


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """Benchmark pass@k: the mean of ``pass_at_k(n, c, k)`` over ``(n, c)`` per problem."""
    values = [pass_at_k(n, c, k) for n, c in counts]
    if not values:
        raise ValueError("no problems to average")
    return float(np.mean(values))


def greedy_pass_at_1(passed: Iterable[bool]) -> float:
    """Fraction of problems whose single (greedy) sample passes."""
    flags = [bool(p) for p in passed]
    if not flags:
        raise ValueError("no problems to average")
    return sum(flags) / len(flags)


# ----------------------------------------------------------------------- EvalPlus

_EVALPLUS_STATUSES = frozenset({"pass", "fail", "timeout"})


@dataclass(frozen=True)
class TaskCounts:
    """Samples of one problem: how many, and how many are correct."""

    n: int
    correct: int


@dataclass(frozen=True)
class EvalPlusScore:
    """Base and plus (extra tests) pass@k of one EvalPlus result file."""

    k: int
    n_tasks: int
    base_pass_at_k: float
    plus_pass_at_k: float
    base: dict[str, TaskCounts]
    plus: dict[str, TaskCounts]


def _load_json(source: Mapping[str, Any] | str | Path) -> Any:
    if isinstance(source, Mapping):
        return source
    path = Path(source)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def _status(sample: Mapping[str, Any], key: str, task_id: str) -> str | None:
    value = sample.get(key)
    if value is None:
        return None
    if value not in _EVALPLUS_STATUSES:
        raise ValueError(f"{task_id}: unknown {key} {value!r} (expected pass/fail/timeout)")
    return str(value)


def score_evalplus(results: Mapping[str, Any] | str | Path, *, k: int = 1) -> EvalPlusScore:
    """Score an EvalPlus result file (the whole file, its ``eval`` part, or a path).

    A missing ``plus_status`` (base-only runs) counts as not plus-correct.
    """
    data = _load_json(results)
    evals = data.get("eval", data) if isinstance(data, Mapping) else None
    if not isinstance(evals, Mapping) or not evals:
        raise ValueError("EvalPlus results need a non-empty 'eval' object keyed by task_id")
    base: dict[str, TaskCounts] = {}
    plus: dict[str, TaskCounts] = {}
    for task_id, samples in evals.items():
        if not isinstance(samples, list) or not samples:
            raise ValueError(f"{task_id}: expected a non-empty list of samples")
        base_ok = plus_ok = 0
        for sample in samples:
            base_status = _status(sample, "base_status", task_id)
            plus_status = _status(sample, "plus_status", task_id)
            if base_status is None:
                raise ValueError(f"{task_id}: sample without base_status")
            base_ok += base_status == "pass"
            plus_ok += base_status == "pass" and plus_status == "pass"
        base[task_id] = TaskCounts(n=len(samples), correct=base_ok)
        plus[task_id] = TaskCounts(n=len(samples), correct=plus_ok)
    return EvalPlusScore(
        k=k,
        n_tasks=len(base),
        base_pass_at_k=mean_pass_at_k(((t.n, t.correct) for t in base.values()), k),
        plus_pass_at_k=mean_pass_at_k(((t.n, t.correct) for t in plus.values()), k),
        base=base,
        plus=plus,
    )


# ---------------------------------------------------------------------- MultiPL-E


@dataclass(frozen=True)
class MultiPLEScore:
    """pass@k over MultiPL-E problems (one result file per problem)."""

    k: int
    n_problems: int
    pass_at_k: float
    languages: tuple[str, ...]
    problems: dict[str, TaskCounts]


def multiple_completion_passes(result: Mapping[str, Any]) -> bool:
    """A MultiPL-E completion passes when its status is ``OK`` and it exited with 0."""
    return result.get("status") == "OK" and result.get("exit_code") == 0


def multiple_problem_counts(problem: Mapping[str, Any]) -> TaskCounts:
    """Samples and passing samples of one MultiPL-E problem result."""
    results = problem.get("results")
    if not isinstance(results, list) or not results:
        raise ValueError(f"{problem.get('name', '?')}: expected a non-empty 'results' list")
    return TaskCounts(n=len(results), correct=sum(map(multiple_completion_passes, results)))


def score_multiple(problems: Iterable[Mapping[str, Any]], *, k: int = 1) -> MultiPLEScore:
    """pass@k over MultiPL-E problem results (as loaded by ``load_multiple_results``)."""
    counts: dict[str, TaskCounts] = {}
    languages: set[str] = set()
    for problem in problems:
        name = problem.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError("MultiPL-E problem result without a 'name'")
        if name in counts:
            raise ValueError(f"{name}: duplicate problem")
        counts[name] = multiple_problem_counts(problem)
        if isinstance(problem.get("language"), str):
            languages.add(problem["language"])
    return MultiPLEScore(
        k=k,
        n_problems=len(counts),
        pass_at_k=mean_pass_at_k(((t.n, t.correct) for t in counts.values()), k),
        languages=tuple(sorted(languages)),
        problems=counts,
    )


def load_multiple_results(directory: str | Path) -> list[dict[str, Any]]:
    """Read every ``*.results.json`` / ``*.results.json.gz`` file in ``directory``."""
    folder = Path(directory)
    paths = sorted(folder.glob("*.results.json")) + sorted(folder.glob("*.results.json.gz"))
    return [_load_json(path) for path in paths]
