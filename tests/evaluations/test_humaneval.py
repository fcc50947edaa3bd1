"""HumanEval: extraction from real-looking answers, the test program, and pass@1 / pass@k.

Pure (``-p no:django``). Truth: the benchmark's canonical solutions must pass and a wrong
body must fail, whatever prose or fences surround them; pass@k is checked against direct
binomial counting.
"""

from __future__ import annotations

import ast
import math

import pytest

from evaluations import humaneval as he
from evaluations.calls import map_items
from evaluations.sandbox import SandboxConfig, Status

PROBLEMS = he.load_problems()
BY_ID = {p.task_id: p for p in PROBLEMS}
SUBSET = PROBLEMS[::6]  # 28 problems, the sandbox runs stay few


def full(problem: he.Problem) -> str:
    return problem.prompt + problem.canonical_solution


def test_the_package_ships_the_164_problems():
    assert len(PROBLEMS) == 164
    assert len(BY_ID) == 164
    assert all(he._def_pattern(p.entry_point).search(p.prompt) for p in PROBLEMS)


def _defines(code: str | None, name: str) -> bool:
    assert code is not None
    tree = ast.parse(code)
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body)


@pytest.mark.parametrize(
    "answer",
    [
        "```python\ndef add(a, b):\n    return a + b\n```",
        "Sure! Here is the function:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\nIt adds.",
        "Here you go:\ndef add(a, b):\n    return a + b\nThis returns the sum of both numbers.",
        "def add(a, b):\n    return a + b\n\nprint(add(1, 2))\nassert add(2, 2) == 4\n",
        "```\n    def add(a, b):\n        return a + b\n```",  # an indented block
        "Usage:\n```python\nadd(1, 2)\n```\nCode:\n```python\ndef add(a, b):\n    return a + b\n```",
        "```python\ndef add(a, b):\n    return a + b\n",  # cut off before the closing fence
        "```python\ndef add(a, b):\n    return a + b\n\nif __name__ == '__main__':\n    add(1, 2)\n```",
    ],
    ids=[
        "fence",
        "prose-fence",
        "bare-prose",
        "examples",
        "indented",
        "two-blocks",
        "unclosed",
        "main",
    ],
)
def test_extraction_keeps_the_function_and_drops_the_rest(answer):
    code = he.extract_function(answer, "add")
    assert _defines(code, "add")
    assert "print(" not in code and "assert" not in code and "__main__" not in code
    assert "Sure" not in code and "sum of both" not in code


def test_extraction_keeps_imports_helpers_decorators_and_constants():
    answer = (
        "I use a helper.\n```python\nimport math\nfrom functools import lru_cache\n\nLIMIT = 10\n\n"
        "@lru_cache(maxsize=None)\ndef helper(n):\n    return math.isqrt(n)\n\n"
        "def solve(n):\n    return helper(n) < LIMIT\n\nprint(solve(4))\n```"
    )
    code = he.extract_function(answer, "solve")
    tree = ast.parse(code)
    names = [type(n).__name__ for n in tree.body]
    assert names == ["Import", "ImportFrom", "Assign", "FunctionDef", "FunctionDef"]
    assert "@lru_cache(maxsize=None)" in code


def test_extraction_fails_without_the_function():
    assert he.extract_function("I cannot help with that.", "add") is None
    assert he.extract_function("```python\ndef plus(a, b):\n    return a + b\n```", "add") is None
    assert he.extract_function("def add(a, b)\n    return a + b\n", "add") is None  # no colon


def test_a_body_only_answer_continues_the_prompt():
    problem = BY_ID["HumanEval/0"]
    code = he.extract_function(problem.canonical_solution, problem.entry_point, problem.prompt)
    assert _defines(code, problem.entry_point)


def test_program_carries_the_prompts_helpers():
    # HumanEval/38: decode_cyclic's tests call encode_cyclic, defined only in the prompt.
    problem = BY_ID["HumanEval/38"]
    only_target = "def decode_cyclic(s: str):\n" + problem.canonical_solution
    result = he.score_sample(problem, f"```python\n{only_target}```")
    assert result.status == Status.PASSED, result.stderr_tail


def test_canonical_solutions_pass_through_prose_and_fences():
    def answer(p: he.Problem) -> he.SampleResult:
        return he.score_sample(p, f"Here it is:\n\n```python\n{full(p)}```\n\nHope it helps!")

    results = map_items(answer, SUBSET, max_workers=2)
    assert [r.status for r in results] == ["passed"] * len(SUBSET)
    assert he.report(results).pass_at_1 == 1.0


def test_wrong_bodies_fail_and_pass_at_1_counts_them():
    wrong = {p.task_id for p in SUBSET[::2]}

    def answer(p: he.Problem) -> he.SampleResult:
        body = "    return None\n" if p.task_id in wrong else p.canonical_solution
        return he.score_sample(p, f"```python\n{p.prompt}{body}```")

    results = map_items(answer, SUBSET, max_workers=2)
    assert {r.task_id for r in results if not r.passed} == wrong
    assert he.report(results).pass_at_1 == pytest.approx(1 - len(wrong) / len(SUBSET))


def test_unextractable_answers_are_recorded_without_running():
    result = he.score_sample(BY_ID["HumanEval/0"], "I would rather not.")
    assert result.status == he.NO_FUNCTION
    assert result.extracted is None and result.duration_s is None


def test_run_suite_with_a_scripted_model_and_a_failing_call():
    picked = SUBSET[:6]
    answers = {p.prompt.rstrip(): full(p) for p in picked[:4]}

    def chat(messages):
        user = messages[-1]["content"]
        if picked[5].prompt.rstrip() in user:
            raise TimeoutError("the provider hung")
        for marker, text in answers.items():
            if marker in user:
                return f"```python\n{text}```"
        return "No idea."

    result = he.run_suite(picked, chat, max_workers=2)
    assert result.statuses == {"passed": 4, he.NO_FUNCTION: 1, he.PROVIDER_ERROR: 1}
    assert result.pass_at_1 == pytest.approx(4 / 6)
    failed_call = next(r for r in result.results if r.status == he.PROVIDER_ERROR)
    assert failed_call.error == "TimeoutError"  # the class only: messages may quote the code


def test_build_messages_asks_for_a_fenced_function():
    messages = he.build_messages(BY_ID["HumanEval/0"])
    assert [m["role"] for m in messages] == ["system", "user"]
    assert BY_ID["HumanEval/0"].prompt.rstrip() in messages[1]["content"]


def _expected_pass_at_k(n: int, c: int, k: int) -> float:
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def test_pass_at_k_matches_binomial_counting():
    samples = []
    plan = {"A": (5, 0), "B": (5, 2), "C": (5, 5), "D": (5, 4)}
    for task, (n, c) in plan.items():
        samples += [he.SampleResult(task, "passed", "", "") for _ in range(c)]
        samples += [he.SampleResult(task, "failed", "", "") for _ in range(n - c)]
    for k in (1, 2, 3):
        expected = sum(_expected_pass_at_k(n, c, k) for n, c in plan.values()) / len(plan)
        assert he.pass_at_k(samples, k) == pytest.approx(expected)


@pytest.mark.parametrize("isolation", ["bwrap", "none"])
def test_the_benchmarks_imports_work_in_every_isolation_mode(isolation):
    # HumanEval/32's tests import random, HumanEval/162's solution hashlib.
    config = SandboxConfig(isolation=isolation)
    for task in ("HumanEval/32", "HumanEval/162"):
        problem = BY_ID[task]
        result = he.score_sample(problem, f"```python\n{full(problem)}```", config=config)
        assert result.passed, result.stderr_tail
