"""The well-formatted check: no false alarm on the 7,012 reference middles, and each defect caught.

Pure (``-p no:django``). The reference middles are insertable by construction, so every
issue reported on them would be a false positive; each defect is then added to real
problems of each set and must be reported under its own name.
"""

from __future__ import annotations

import pytest

from evaluations.infilling import SETS, load_problems
from evaluations.wellformed import ISSUES, format_issues, is_well_formatted

ALL = {name: load_problems(name) for name in SETS}


def test_set_sizes():
    assert {name: len(problems) for name, problems in ALL.items()} == {
        "single-line": 1033,
        "random-span-light": 164,
        "multi-line": 5815,
    }


@pytest.mark.parametrize("name", list(SETS))
def test_reference_middles_are_well_formatted(name):
    flagged = [
        (p.task_id, issues)
        for p in ALL[name]
        if (
            issues := format_issues(
                p.canonical_solution,
                prefix=p.prompt,
                suffix=p.suffix,
                reference=p.canonical_solution,
            )
        )
    ]
    assert flagged == []


def _last_line(text: str) -> str:
    return next(line for line in reversed(text.splitlines()) if line.strip())


def _first_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.strip())


def _check(problem, middle: str) -> tuple[str, ...]:
    return format_issues(
        middle, prefix=problem.prompt, suffix=problem.suffix, reference=problem.canonical_solution
    )


@pytest.mark.parametrize("name", ["single-line", "multi-line"])
def test_repeating_whole_neighbour_lines_is_caught(name):
    problems = [p for p in ALL[name] if p.prompt.strip() and p.suffix.strip()][::50]
    for p in problems:
        assert "repeated_prefix" in _check(p, _last_line(p.prompt) + "\n" + p.canonical_solution)
        assert "repeated_suffix" in _check(p, p.canonical_solution + _first_line(p.suffix) + "\n")


def test_repeating_the_cursor_line_fragments_is_caught():
    caught_prefix = caught_suffix = eligible_prefix = eligible_suffix = 0
    for p in ALL["random-span-light"]:
        head = p.prompt.rsplit("\n", 1)[-1].strip()
        tail = p.suffix.split("\n", 1)[0].strip()
        if len(head.replace(" ", "")) >= 4:
            eligible_prefix += 1
            caught_prefix += "repeated_prefix" in _check(p, head + p.canonical_solution)
        if len(tail.replace(" ", "")) >= 4 and not p.canonical_solution.endswith("\n"):
            eligible_suffix += 1
            caught_suffix += "repeated_suffix" in _check(p, p.canonical_solution + tail)
    assert eligible_prefix > 50 and eligible_suffix > 15
    assert caught_prefix == eligible_prefix
    assert caught_suffix == eligible_suffix


def test_fences_tags_prose_and_empty_answers_are_caught():
    p = ALL["single-line"][0]
    middle = p.canonical_solution
    assert _check(p, "") == ("empty",)
    assert _check(p, "   \n") == ("empty",)
    assert "fence" in _check(p, f"```python\n{middle}```\n")
    assert "tag" in _check(p, f"<CODE>{middle}")
    assert _check(p, f"Here is the line you need:\n{middle}") == ("syntax",)
    assert is_well_formatted(middle, prefix=p.prompt, suffix=p.suffix, reference=middle)


def test_syntax_is_not_blamed_when_the_reference_file_does_not_parse():
    # A cut that leaves the reference file unparseable cannot count against the model.
    assert format_issues("x = (", prefix="", suffix="", reference="y = (") == ()
    assert format_issues("x = (", prefix="", suffix="", reference="y = 1") == ("syntax",)


def test_issue_names_are_the_documented_ones():
    assert set(ISSUES) == {"empty", "fence", "tag", "repeated_prefix", "repeated_suffix", "syntax"}
