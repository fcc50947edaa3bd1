"""Tests for analysis.pass_at_k: pass@k, EvalPlus and MultiPL-E result scoring."""

from __future__ import annotations

import gzip
import json
from math import comb

import pytest

from analysis.pass_at_k import (
    greedy_pass_at_1,
    load_multiple_results,
    mean_pass_at_k,
    multiple_completion_passes,
    pass_at_k,
    score_evalplus,
    score_multiple,
)

# ------------------------------------------------------------------------ pass@k


def binomial_pass_at_k(n: int, c: int, k: int) -> float:
    return 1.0 - comb(n - c, k) / comb(n, k)


@pytest.mark.parametrize(
    ("n", "c", "k"),
    [
        (1, 0, 1),
        (1, 1, 1),
        (10, 3, 1),
        (10, 3, 5),
        (20, 0, 10),
        (20, 20, 10),
        (200, 17, 10),
        (200, 1, 100),
    ],
)
def test_pass_at_k_equals_binomial_formula(n, c, k):
    assert pass_at_k(n, c, k) == pytest.approx(binomial_pass_at_k(n, c, k), abs=1e-12)


def test_pass_at_1_is_fraction_correct():
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)


def test_pass_at_k_is_one_when_too_few_wrong_samples():
    # n - c < k: every k-subset contains a correct sample.
    assert pass_at_k(10, 8, 3) == 1.0
    assert pass_at_k(5, 5, 1) == 1.0


def test_pass_at_k_is_stable_for_huge_n():
    # C(100000, 5000) overflows floats; the product form does not.
    value = pass_at_k(100_000, 10, 5_000)
    assert 0.0 < value < 1.0
    assert value == pytest.approx(1 - (1 - 5_000 / 100_000) ** 10, rel=1e-3)


@pytest.mark.parametrize(
    ("n", "c", "k", "error"),
    [
        (0, 0, 1, ValueError),
        (5, 6, 1, ValueError),
        (5, -1, 1, ValueError),
        (5, 2, 0, ValueError),
        (5, 2, 6, ValueError),
        (5.0, 2, 1, TypeError),
        (5, True, 1, TypeError),
    ],
)
def test_pass_at_k_rejects_bad_input(n, c, k, error):
    with pytest.raises(error):
        pass_at_k(n, c, k)


def test_mean_pass_at_k_and_greedy():
    assert mean_pass_at_k([(10, 3), (10, 0), (10, 10)], k=1) == pytest.approx((0.3 + 0 + 1) / 3)
    assert greedy_pass_at_1([True, False, True, True]) == 0.75
    with pytest.raises(ValueError):
        mean_pass_at_k([], k=1)
    with pytest.raises(ValueError):
        greedy_pass_at_1([])


# ----------------------------------------------------------------------- EvalPlus


def evalplus_file(samples: dict[str, list[tuple[str, str | None]]]) -> dict:
    return {
        "date": "2024-12-01 10:00",
        "hash": "abc123",
        "eval": {
            task_id: [
                {"task_id": task_id, "solution": "def f(): ...", "base_status": b, "plus_status": p,
                 "base_fail_tests": [], "plus_fail_tests": []}
                for b, p in pairs
            ]
            for task_id, pairs in samples.items()
        },
    }  # fmt: skip


def test_evalplus_plus_needs_base_and_plus_pass():
    data = evalplus_file(
        {
            "HumanEval/0": [("pass", "pass")],
            "HumanEval/1": [("pass", "fail")],
            "HumanEval/2": [("fail", "pass")],  # plus pass alone does not count
            "HumanEval/3": [("timeout", "timeout")],
        }
    )
    score = score_evalplus(data)
    assert score.n_tasks == 4
    assert score.base_pass_at_k == pytest.approx(2 / 4)
    assert score.plus_pass_at_k == pytest.approx(1 / 4)
    assert score.plus["HumanEval/2"].correct == 0


def test_evalplus_multiple_samples_and_pass_at_k(tmp_path):
    data = evalplus_file(
        {
            "Mbpp/2": [("pass", "pass"), ("pass", "fail"), ("fail", "fail"), ("pass", "pass")],
            "Mbpp/3": [("fail", "fail")] * 4,
        }
    )
    path = tmp_path / "eval_results.json"
    path.write_text(json.dumps(data))
    score = score_evalplus(path, k=2)
    assert score.base["Mbpp/2"].correct == 3 and score.plus["Mbpp/2"].correct == 2
    assert score.base_pass_at_k == pytest.approx((binomial_pass_at_k(4, 3, 2) + 0) / 2)
    assert score.plus_pass_at_k == pytest.approx((binomial_pass_at_k(4, 2, 2) + 0) / 2)
    # The "eval" part alone is accepted too.
    assert score_evalplus(data["eval"], k=2) == score


def test_evalplus_missing_plus_status_is_not_plus_correct():
    score = score_evalplus(evalplus_file({"HumanEval/0": [("pass", None)]}))
    assert (score.base_pass_at_k, score.plus_pass_at_k) == (1.0, 0.0)


@pytest.mark.parametrize(
    "data",
    [
        {"date": "x", "eval": {}},
        {"eval": {"HumanEval/0": []}},
        {"eval": {"HumanEval/0": [{"base_status": "passed", "plus_status": "pass"}]}},
        {"eval": {"HumanEval/0": [{"plus_status": "pass"}]}},
    ],
)
def test_evalplus_malformed(data):
    with pytest.raises(ValueError):
        score_evalplus(data)


# ---------------------------------------------------------------------- MultiPL-E


def multiple_problem(name: str, outcomes: list[tuple[str, int | None]]) -> dict:
    return {
        "name": name,
        "language": "lua",
        "prompt": "...",
        "tests": "...",
        "results": [
            {"program": "...", "stdout": "", "stderr": "", "exit_code": code, "status": status}
            for status, code in outcomes
        ],
    }


@pytest.mark.parametrize(
    ("status", "exit_code", "passes"),
    [
        ("OK", 0, True),
        ("OK", 1, False),
        ("Exception", 0, False),
        ("Timeout", None, False),
        ("SyntaxError", 1, False),
    ],
)
def test_multiple_completion_pass_rule(status, exit_code, passes):
    assert multiple_completion_passes({"status": status, "exit_code": exit_code}) is passes


def test_multiple_scoring_and_loading(tmp_path):
    problems = [
        multiple_problem("HumanEval_0_has_close_elements", [("OK", 0), ("OK", 1)]),
        multiple_problem("HumanEval_1_separate_paren_groups", [("Exception", 1), ("OK", 0)]),
        multiple_problem("HumanEval_2_truncate_number", [("Timeout", None), ("OK", 2)]),
    ]
    (tmp_path / "HumanEval_0_has_close_elements.results.json").write_text(json.dumps(problems[0]))
    (tmp_path / "HumanEval_1_separate_paren_groups.results.json").write_text(
        json.dumps(problems[1])
    )
    with gzip.open(tmp_path / "HumanEval_2_truncate_number.results.json.gz", "wt") as handle:
        json.dump(problems[2], handle)
    (tmp_path / "notes.json").write_text("{}")  # not a result file: ignored
    loaded = load_multiple_results(tmp_path)
    assert [p["name"] for p in loaded] == [p["name"] for p in problems]
    score = score_multiple(loaded, k=1)
    assert score.n_problems == 3
    assert score.languages == ("lua",)
    assert score.pass_at_k == pytest.approx((0.5 + 0.5 + 0.0) / 3)
    assert score_multiple(loaded, k=2).pass_at_k == pytest.approx((1 + 1 + 0) / 3)


def test_multiple_malformed():
    with pytest.raises(ValueError):
        score_multiple([{"name": "x", "results": []}])
    with pytest.raises(ValueError):
        score_multiple([{"results": [{"status": "OK", "exit_code": 0}]}])
    dup = multiple_problem("p", [("OK", 0)])
    with pytest.raises(ValueError):
        score_multiple([dup, dup])
