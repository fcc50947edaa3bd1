"""Tests for analysis.fim_cleanup: the clean-up of chat answers, on the real battle sample.

The recovery test wraps each real completion of the 112 valid battles the way chat models
answer (repeated prefix/suffix lines, <CODE> tags, fences, chatter) and checks that the
clean-up gives the completion back; the original server's rules (fim_original_rules)
run on the same cases for comparison. Run with ``-s`` to see the table.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from analysis.fim import (
    trim_context,
)
from analysis.fim_cleanup import clean_chat_completion, extract_snippet, limit_lines, strip_overlap
from tests.analysis.fim_original_rules import original_parse_response
from tests.analysis.fim_sample import load_fim_sample

TAGS = ("<CODE>", "</CODE>", "<PREFIX>", "</PREFIX>", "<SUFFIX>", "</SUFFIX>")


# ----------------------------------------------------------------------------- data


@pytest.fixture(scope="module")
def battles() -> list[dict[str, str]]:
    rows, malformed = load_fim_sample()
    assert len(rows) == 112 and malformed == 1
    return rows


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def _cursor_head(prefix: str) -> str:
    return _lf(prefix).split("\n")[-1]


def _cursor_tail(suffix: str) -> str:
    return _lf(suffix).split("\n")[0]


def _head_nonblank(prefix: str) -> str:
    """What a model repeats when told "the last line, or the last non-blank one"."""
    lines = _lf(prefix).split("\n")
    if lines[-1].strip():
        return lines[-1]
    for line in reversed(lines[:-1]):
        if line.strip():
            return line + "\n" + lines[-1]
    return lines[-1]


def _tail_nonblank(suffix: str) -> str:
    lines = _lf(suffix).split("\n")
    if lines[0].strip():
        return lines[0]
    for line in lines[1:]:
        if line.strip():
            return "\n" + line
    return lines[0]


Wrap = Callable[[str, str, str], str]

# How chat models wrap a completion c for a cursor between prefix p and suffix s.
STYLES: dict[str, Wrap] = {
    "tags": lambda p, c, s: f"<CODE>{_cursor_head(p)}{c}{_cursor_tail(s)}</CODE>",
    "tags_newlines": lambda p, c, s: f"<CODE>\n{_cursor_head(p)}{c}{_cursor_tail(s)}\n</CODE>",
    # The API removed the </CODE> stop word from the answer.
    "api_stop": lambda p, c, s: f"<CODE>\n{_cursor_head(p)}{c}{_cursor_tail(s)}\n",
    "chatter_fence": lambda p, c, s: (
        f"Here is the completion:\n\n```python\n{_cursor_head(p)}{c}{_cursor_tail(s)}\n```\n\n"
        "It closes the loop."
    ),
    "bare_fence": lambda p, c, s: f"```\n{_cursor_head(p)}{c}{_cursor_tail(s)}\n```",
    "tags_in_fence": lambda p, c, s: (
        f"```python\n<CODE>{_cursor_head(p)}{c}{_cursor_tail(s)}</CODE>\n```"
    ),
    "fence_in_tags": lambda p, c, s: (
        f"Sure.\n<CODE>\n```python\n{_cursor_head(p)}{c}{_cursor_tail(s)}\n```\n</CODE>"
    ),
    "nonblank_lines": lambda p, c, s: f"<CODE>\n{_head_nonblank(p)}{c}{_tail_nonblank(s)}\n</CODE>",
    # Partly or not compliant models.
    "prefix_only": lambda p, c, s: f"<CODE>{_cursor_head(p)}{c}</CODE>",
    "no_repeat": lambda p, c, s: f"<CODE>{c}</CODE>",
}
INSTRUCTED = [s for s in STYLES if s not in ("prefix_only", "no_repeat")]


def _is_artifact(c: str) -> bool:
    """Shown completions the original's own pipeline mangled: a protocol tag left inside,
    or cut between the CR and LF of a CRLF. No well-formed answer can carry them."""
    return any(t in c for t in TAGS) or c.endswith("\r")


def _duplicates_document(prefix: str, c: str, suffix: str) -> bool:
    """The completion itself repeats whole lines next to the cursor (it re-typed the line
    above a blank cursor line, or the lines below), so inserting it verbatim duplicates
    code and a correct clean-up must not give it back unchanged."""
    cl = [line.rstrip() for line in _lf(c).split("\n") if line.strip()]
    if not cl:
        return False
    pl = [line.rstrip() for line in _lf(prefix).split("\n") if line.strip()]
    sl = [line.rstrip() for line in _lf(suffix).split("\n") if line.strip()]
    blank_cursor_line = not _cursor_head(prefix).strip()
    if blank_cursor_line and any(cl[:k] == pl[-k:] for k in range(1, min(len(cl), len(pl)) + 1)):
        return True
    crosses = "\n" in _lf(c).strip() or not _cursor_tail(suffix).strip()
    return crosses and any(cl[-k:] == sl[:k] for k in range(1, min(len(cl), len(sl)) + 1))


def _cases(battles: list[dict[str, str]]) -> list[tuple[str, str, str, str]]:
    """(kind, prefix, completion, suffix) for both completions of every battle."""
    out = []
    for row in battles:
        for col in ("completion_a", "completion_b"):
            p, c, s = row["prefix"], row[col], row["suffix"]
            if _is_artifact(c):
                kind = "artifact"
            elif _duplicates_document(p, c, s):
                kind = "duplicate"
            else:
                kind = "clean"
            out.append((kind, p, c, s))
    return out


def _ours(raw: str, p: str, s: str) -> str:
    return clean_chat_completion(raw, prefix=p, suffix=s)


def _original(raw: str, p: str, s: str) -> str:
    return original_parse_response(raw, prefix=p, suffix=s, max_lines=10**6)


@pytest.fixture(scope="module")
def recovery(battles: list[dict[str, str]]) -> dict[str, dict[str, list[int]]]:
    """style -> subset -> [cases, ours exact, original exact, original exact modulo CRLF]."""
    table: dict[str, dict[str, list[int]]] = {}
    for style, wrap in STYLES.items():
        stats = {"all": [0, 0, 0, 0], "clean": [0, 0, 0, 0]}
        for kind, p, c, s in _cases(battles):
            raw = wrap(p, c, s)
            ours, orig = _ours(raw, p, s), _original(raw, p, s)
            for subset in ("all", "clean") if kind == "clean" else ("all",):
                st = stats[subset]
                st[0] += 1
                st[1] += ours == c
                st[2] += orig == c
                st[3] += orig == _lf(c)
        table[style] = stats
    return table


def _format(table: dict[str, dict[str, list[int]]]) -> str:
    lines = [
        f"{'style':16s} {'subset':6s} {'n':>4s} {'ours':>6s} {'original':>9s} {'orig(LF)':>9s}"
    ]
    for style, stats in table.items():
        for subset, (n, ours, orig, orig_lf) in stats.items():
            lines.append(
                f"{style:16s} {subset:6s} {n:4d} {ours / n:6.1%} {orig / n:9.1%} {orig_lf / n:9.1%}"
            )
    for subset in ("all", "clean"):
        tot = [sum(t[subset][i] for t in table.values()) for i in range(4)]
        lines.append(
            f"{'TOTAL':16s} {subset:6s} {tot[0]:4d} {tot[1] / tot[0]:6.1%} "
            f"{tot[2] / tot[0]:9.1%} {tot[3] / tot[0]:9.1%}"
        )
    return "\n".join(lines)


# ------------------------------------------------------------------ recovery on real data


def test_sample_composition(battles: list[dict[str, str]]) -> None:
    kinds = [k for k, *_ in _cases(battles)]
    assert len(kinds) == 224
    # Few enough exclusions that the clean subset still covers the sample.
    assert kinds.count("clean") >= 195
    assert 1 <= kinds.count("artifact") <= 15
    assert 1 <= kinds.count("duplicate") <= 20


def test_recovery_rates_real_battles(recovery: dict[str, dict[str, list[int]]]) -> None:
    report = _format(recovery)
    print("\nFiM clean-up: exact recovery of real completions\n" + report)
    for style, stats in recovery.items():
        n, ours, _orig, orig_lf = stats["clean"]
        # Never worse than the original, even if it were credited for LF-converted output.
        assert ours >= orig_lf, f"{style}\n{report}"
        floor = 0.95 if style in INSTRUCTED else 0.90
        assert ours / n >= floor, f"{style}\n{report}"
    clean = [sum(t["clean"][i] for t in recovery.values()) for i in range(4)]
    everything = [sum(t["all"][i] for t in recovery.values()) for i in range(4)]
    assert clean[1] / clean[0] >= 0.96, report
    assert everything[1] / everything[0] >= 0.90, report
    assert everything[1] / everything[0] >= everything[3] / everything[0] + 0.10, report


def test_original_bare_fence_is_unrecognised(recovery: dict[str, dict[str, list[int]]]) -> None:
    # The original only knew ```python, ```cpp, ... openings, never a bare ```.
    n, ours, orig, _ = recovery["bare_fence"]["clean"]
    assert orig == 0 and ours / n >= 0.95


def test_original_deletes_real_code_where_ours_does_not(battles: list[dict[str, str]]) -> None:
    """On real completions returned without repetition, the original's any-length overlap
    removal cuts characters off real code; count those cuts and check ours keeps them."""
    deleted, kept_by_ours = 0, 0
    for kind, p, c, s in _cases(battles):
        if kind != "clean":
            continue
        raw = f"<CODE>{c}</CODE>"
        orig, ours = _lf(_original(raw, p, s)), _ours(raw, p, s)
        want = _lf(c)
        lost = want[len(orig) :] if want.startswith(orig) else want[: len(want) - len(orig)]
        cut = len(orig) < len(want) and (want.startswith(orig) or want.endswith(orig))
        if cut and lost.strip():  # real characters, not just whitespace
            deleted += 1
            kept_by_ours += ours == c
    print(f"\noriginal cut real code from {deleted} clean completions; ours kept {kept_by_ours}")
    assert deleted >= 10
    assert kept_by_ours >= deleted - 2


def test_trimmed_context_gives_same_clean_up(battles: list[dict[str, str]]) -> None:
    # Only the lines next to the cursor matter, so the server may clean with the trimmed
    # context it sent to the model.
    for _, p, c, s in _cases(battles):
        tp, ts = trim_context(p, s, max_prefix_tokens=200, max_suffix_tokens=100)
        raw = STYLES["nonblank_lines"](p, c, s)
        if _head_nonblank(p) != _head_nonblank(tp) or _tail_nonblank(s) != _tail_nonblank(ts):
            continue  # the repeated line itself was trimmed away
        assert _ours(raw, tp, ts) == _ours(raw, p, s)


# ------------------------------------------------------------- the `)` flaw, crafted


FLAW_CASES = [
    pytest.param(
        "total = len(items",
        "\nprint(total)\n",
        "<CODE>)</CODE>",
        ")",
        id="answer-is-the-closing-paren-the-prefix-also-ends-with",
    ),
    pytest.param(
        "result = compute(",
        ")\nprint(result)\n",
        "<CODE>load(path)</CODE>",
        "load(path)",
        id="nested-call-ends-with-the-autoclosed-paren",
    ),
    pytest.param(
        "print(",
        ")\n",
        "<CODE>(a + b) * c</CODE>",
        "(a + b) * c",
        id="answer-starts-with-the-paren-the-prefix-ends-with",
    ),
    pytest.param(
        "function main() {\n  ",
        "\n}\n\nmain();\n",
        "<CODE>console.log(x);</CODE>",
        "console.log(x);",
        id="answer-ends-like-the-file-ends",
    ),
    pytest.param(
        "x = f(",
        ")\nprint(x)\n",
        "<CODE>x = f(g(1))</CODE>",
        "g(1)",
        id="compliant-answer-cut-twice-by-suffix-end-rule",
    ),
    pytest.param(
        "if (ready) {\n    run(",
        ");\n}\n",
        "```javascript\n    run(task, done);\n```",
        "task, done",
        id="compliant-fenced-answer",
    ),
]


@pytest.mark.parametrize(("prefix", "suffix", "raw", "expected"), FLAW_CASES)
def test_paren_flaw_fixed(prefix: str, suffix: str, raw: str, expected: str) -> None:
    ours = clean_chat_completion(raw, prefix=prefix, suffix=suffix)
    assert ours == expected
    if not raw.startswith("```javascript"):
        # The original deletes real code on each of these.
        assert _original(raw, prefix, suffix) != expected


def test_compliant_fenced_case_original_also_ok_but_loses_nothing() -> None:
    prefix, suffix = "if (ready) {\n    run(", ");\n}\n"
    raw = "```javascript\n    run(task, done);\n```"
    assert _original(raw, prefix, suffix) == "task, done"


# ------------------------------------------------------------- overlap rule details


def test_prefix_line_repeated_is_removed_mid_line() -> None:
    r = strip_overlap(
        "    total = sum(values)", prefix="def f(values):\n    total = sum(", suffix=""
    )
    assert r.middle == "values)" and r.prefix_overlap == "    total = sum("


def test_previous_nonblank_line_repeated_on_blank_cursor_line() -> None:
    prefix = "def f():\n    x = 1\n\n    "
    r = strip_overlap("    x = 1\n    return x", prefix=prefix, suffix="\n")
    assert r.middle == "return x"


def test_suffix_line_after_blank_lines_is_removed() -> None:
    suffix = "\r\n\r\n\r\n    }\r\n    return res;\r\n}"
    r = strip_overlap("level++;\n    }", prefix="    while (x) {\n        ", suffix=suffix)
    assert r.middle == "level++;" and r.suffix_overlap == "\n    }"


def test_short_fragment_needs_evidence_or_brackets() -> None:
    # Repeated prefix line = the model follows the format: the `)` is its copy.
    assert clean_chat_completion("<CODE>x = f(g(1))</CODE>", prefix="x = f(", suffix=")") == (
        "g(1)"
    )
    # No repeated prefix: the brackets of the resulting line decide.
    assert clean_chat_completion("<CODE>a, b)</CODE>", prefix="x = f(", suffix=")") == "a, b"
    assert clean_chat_completion("<CODE>g(1)</CODE>", prefix="x = f(", suffix=")") == "g(1)"
    # No brackets to go by: a one-character fragment stays, a long one goes.
    assert clean_chat_completion("<CODE>b;</CODE>", prefix="a = ", suffix=";") == "b;"
    assert (
        clean_chat_completion("<CODE>b + cost + d</CODE>", prefix="t = a + ", suffix="cost + d")
        == "b + "
    )


def test_min_fragment_overlap_is_a_parameter() -> None:
    raw = "<CODE>b + cost + d</CODE>"
    kept = clean_chat_completion(raw, prefix="t = a + ", suffix="cost + d", min_fragment_overlap=10)
    assert kept == "b + cost + d"


def test_nothing_new_on_blank_cursor_line() -> None:
    # Repeats the line above and the line below, adds nothing: insert nothing.
    raw = "<CODE>\nx = 1\n    return x\n</CODE>"
    assert clean_chat_completion(raw, prefix="x = 1\n", suffix="\n    return x\n") == ""


def test_deindented_repeat_of_prefix_line() -> None:
    prefix = "class A:\n    def total(self):\n        return sum("
    raw = "<CODE>\nreturn sum(self.items)</CODE>"
    assert clean_chat_completion(raw, prefix=prefix, suffix="") == "self.items)"


def test_short_deindented_repeat_is_not_trusted() -> None:
    # "}" without its indentation could be new code closing another block.
    out = strip_overlap("}\nfoo()", prefix="  if (a) {\n    b();\n  }", suffix="").middle
    assert out == "}\nfoo()"


def test_crlf_matching_and_model_line_endings_kept() -> None:
    prefix = "int main() {\r\n    int a = 1;\r\n    int b = "
    suffix = "\r\n    return a + b;\r\n}\r\n"
    lf_answer = "<CODE>    int b = 2;\n    a += b;\n    return a + b;</CODE>"
    crlf_answer = "<CODE>    int b = 2;\r\n    a += b;\r\n    return a + b;</CODE>"
    assert clean_chat_completion(lf_answer, prefix=prefix, suffix=suffix) == "2;\n    a += b;"
    assert clean_chat_completion(crlf_answer, prefix=prefix, suffix=suffix) == ("2;\r\n    a += b;")


def test_leading_newline_formatting_depends_on_cursor_line() -> None:
    # After text on the cursor line, a leading newline is a real line break.
    assert (
        clean_chat_completion("<CODE>\nfor i in range(3):</CODE>", prefix="# loop", suffix="")
        == "\nfor i in range(3):"
    )
    # On an empty cursor line it would only add a blank line.
    assert (
        clean_chat_completion("<CODE>\nfor i in range(3):</CODE>", prefix="# loop\n", suffix="")
        == "for i in range(3):"
    )


def test_trailing_spaces_of_suffix_line_may_be_dropped_by_model() -> None:
    r = strip_overlap("x = 1\n    y = 2", prefix="", suffix="\n    y = 2   \nz")
    assert r.middle == "x = 1"


def test_snippet_that_is_only_the_repeated_lines_inserts_nothing() -> None:
    raw = "<CODE>    return a +\n    }</CODE>"
    assert clean_chat_completion(raw, prefix="def f(a):\n    return a +", suffix="\n    }") == ""


def test_whole_answer_copied_from_suffix_inserts_nothing() -> None:
    suffix = "\n    log(x)\n    return x\n"
    raw = "<CODE>\n    log(x)\n    return x\n</CODE>"
    assert clean_chat_completion(raw, prefix="def f(x):\n", suffix=suffix) == ""


# ---------------------------------------------------------------- extraction


def test_extract_cuts_chatter_tags_and_fences() -> None:
    assert extract_snippet("Sure! <CODE>a = 1</CODE> Hope it helps.") == "a = 1"
    assert extract_snippet("Here:\n```tsx\nconst a = <b/>;\n```\nDone.") == "const a = <b/>;"
    assert extract_snippet("```c++\nint a;\n```") == "int a;"
    assert extract_snippet("<CODE>\n```\nx\n```\n</CODE>") == "x"
    # A fence further down inside the tags is code (a markdown file), not a wrapper.
    md = "<CODE># Title\n```bash\nls\n```</CODE>"
    assert extract_snippet(md) == "# Title\n```bash\nls\n```"


def test_extract_cuts_at_earliest_stop_word() -> None:
    raw = "<CODE>a = 1\n<SUFFIX>echo</SUFFIX>\n</CODE>"
    assert extract_snippet(raw) == "a = 1\n"
    # The original tries stop words in list order, so "</CODE>" wins and the echoed
    # suffix stays in the completion.
    assert "<SUFFIX>" in original_parse_response(
        raw, prefix="", suffix="", max_lines=100, overlap=False
    )


def test_extract_padding_newlines() -> None:
    assert extract_snippet("<CODE>\nx\n</CODE>") == "\nx"  # leading one decided later
    assert extract_snippet("<CODE>x\n</CODE>") == "x\n"
    assert extract_snippet("<CODE>\nx\n") == "\nx"  # API removed the stop word


def test_extract_unclosed_fence_and_no_wrapper() -> None:
    assert extract_snippet("```python\nx = 1\ny = 2") == "x = 1\ny = 2"
    assert extract_snippet("x = 1") == "x = 1"
    assert extract_snippet("") == ""


def test_limit_lines() -> None:
    assert limit_lines("a\nb\nc", 2) == "a\nb"
    assert limit_lines("a\r\nb\r\nc", 2) == "a\r\nb"
    assert limit_lines("a\nb", 5) == "a\nb"
    assert limit_lines("a\nb", None) == "a\nb"
    assert limit_lines("a\nb", 0) == ""


def test_max_lines_counts_inserted_lines_not_raw_lines() -> None:
    raw = "Here you go:\n\n```python\n<CODE>    x = 1\n    y = 2\n    z = 3\n</CODE>\n```"
    out = clean_chat_completion(raw, prefix="def f():\n    x = ", suffix="", max_lines=2)
    assert out == "1\n    y = 2"
    # The original spends its max_lines + 1 raw lines on chatter and the fence.
    assert "y = 2" not in _original_limited(raw, "def f():\n    x = ", "", 2)


def _original_limited(raw: str, p: str, s: str, max_lines: int) -> str:
    return original_parse_response(raw, prefix=p, suffix=s, max_lines=max_lines)
