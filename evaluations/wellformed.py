"""Is a fill-in-the-middle answer *well-formatted*, i.e. insertable as it is?

Copilot Arena's Table 2 (blog post of 2024-11-12, ``lmarena/lmarena.github.io``,
``_posts/2024-11-12-copilot-arena.md``) reports "the percentage of well-formatted code
completions" of chat models on HumanEval-infilling: "Instead of measuring pass@1, we only
consider whether the returned infilled code is formatted correctly", the errors being "issues
in formatting or duplicate code segments rather than logical errors". They publish no
checker, so this module states the rule it applies to the middle *after* the clean-up the
arena serves (``analysis.fim`` via ``serving.prompts``). A middle is well-formatted when none
of these issues is found:

* ``empty``: nothing to insert (no benchmark hole is empty);
* ``fence``: a markdown fence line (```` ``` ````) is left in it;
* ``tag``: one of the prompt's tags (``<CODE>``, ``<PREFIX>``, ``<SUFFIX>`` and their closers);
* ``repeated_prefix``: it starts by repeating the end of the prefix: the text before the cursor
  on its line when that has at least ``MIN_FRAGMENT_OVERLAP`` non-blank characters, or else
  the last non-blank prefix line, indentation included, as the middle's first non-blank line;
* ``repeated_suffix``: the same at the other end: a middle ending mid-line must not end with
  the rest of that line (the suffix's first line), one ending with a line break must not end
  with the suffix's first non-blank line;
* ``syntax``: ``prefix + middle + suffix`` does not parse as Python although the file with
  the reference middle does (prose, half-repeated lines and unclosed fences all end up here).

``repeated_*`` can flag a correct middle that legitimately starts or ends like its
neighbour line (rare in HumanEval); ``syntax`` also counts real syntax mistakes of the model.
The issues are reported separately so each can be looked at on its own.
"""

from __future__ import annotations

import warnings
from functools import lru_cache

from analysis.fim import (
    CODE_END,
    CODE_START,
    MIN_FRAGMENT_OVERLAP,
    PREFIX_END,
    PREFIX_START,
    SUFFIX_END,
    SUFFIX_START,
)

from .pyparse import parse

ISSUES = ("empty", "fence", "tag", "repeated_prefix", "repeated_suffix", "syntax")
_TAGS = (CODE_START, CODE_END, PREFIX_START, PREFIX_END, SUFFIX_START, SUFFIX_END)


def _nonspace(text: str) -> int:
    return sum(1 for ch in text if not ch.isspace())


def _first_nonblank(lines: list[str]) -> str:
    # Indentation kept: a model repeats a line as it is; the same statement at another depth
    # (``return False`` closing two blocks) is new code.
    return next((line.rstrip() for line in lines if line.strip()), "")


def _repeats_prefix(middle: str, prefix: str) -> bool:
    head = prefix.rsplit("\n", 1)[-1]
    if head.strip():
        fragment = head.strip()
        return _nonspace(fragment) >= MIN_FRAGMENT_OVERLAP and middle.lstrip().startswith(fragment)
    last = _first_nonblank(prefix.splitlines()[::-1])
    return bool(last) and _first_nonblank(middle.splitlines()) == last


def _repeats_suffix(middle: str, suffix: str) -> bool:
    tail = suffix.split("\n", 1)[0]
    if tail.strip() and not middle.endswith("\n"):
        # The middle ends mid-line: the suffix's first line is the rest of that line.
        fragment = tail.strip()
        last = middle.rsplit("\n", 1)[-1]
        return _nonspace(fragment) >= MIN_FRAGMENT_OVERLAP and last.rstrip().endswith(fragment)
    first = _first_nonblank(suffix.splitlines())
    return bool(first) and _first_nonblank(middle.splitlines()[::-1]) == first


@lru_cache(maxsize=4096)
def parses(source: str) -> bool:
    """Whether ``source`` is syntactically valid Python (nothing is executed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. invalid escape sequences in model output
        try:
            parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True


def format_issues(
    middle: str, *, prefix: str, suffix: str, reference: str | None = None
) -> tuple[str, ...]:
    """The issues (names from `ISSUES`) that make ``middle`` not insertable as it is.

    ``reference`` is the benchmark's own middle; the syntax check only applies when the file
    with it parses (so that a prefix/suffix cut mid-statement does not count against models).
    """
    if not middle.strip():
        return ("empty",)
    issues = []
    if any(line.lstrip().startswith("```") for line in middle.splitlines()):
        issues.append("fence")
    if any(tag in middle for tag in _TAGS):
        issues.append("tag")
    if _repeats_prefix(middle, prefix):
        issues.append("repeated_prefix")
    if _repeats_suffix(middle, suffix):
        issues.append("repeated_suffix")
    baseline_ok = reference is None or parses(prefix + reference + suffix)
    if baseline_ok and not parses(prefix + middle + suffix):
        issues.append("syntax")
    return tuple(issues)


def is_well_formatted(
    middle: str, *, prefix: str, suffix: str, reference: str | None = None
) -> bool:
    return not format_issues(middle, prefix=prefix, suffix=suffix, reference=reference)
