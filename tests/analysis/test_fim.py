"""Tests for analysis.fim: the chat prompt, native FiM fields and the token budget."""

from __future__ import annotations

import pytest

from analysis.fim import (
    CODE_END,
    MAX_PREFIX_TOKENS,
    MAX_SUFFIX_TOKENS,
    STOP_WORDS,
    build_chat_prompt,
    estimate_tokens,
    native_fim_fields,
    trim_context,
    trim_prefix,
    trim_suffix,
)
from analysis.fim_cleanup import clean_chat_completion
from tests.analysis.fim_sample import load_fim_sample


@pytest.fixture(scope="module")
def battles() -> list[dict[str, str]]:
    rows, malformed = load_fim_sample()
    assert len(rows) == 112 and malformed == 1
    return rows


# ---------------------------------------------------------------- prompt


def test_chat_prompt_messages_and_stop_words() -> None:
    prompt = build_chat_prompt("def f(x):\n    return ", "\n\nprint(f(2))", language="python")
    roles = [m["role"] for m in prompt.messages]
    assert roles == ["system", "user"]
    system, user = (m["content"] for m in prompt.messages)
    assert "<CODE>" in system and "last line of the prefix" in system
    assert "first line of the suffix" in system
    assert user.endswith(
        "<PREFIX>def f(x):\n    return </PREFIX>\n<SUFFIX>\n\nprint(f(2))</SUFFIX>"
    )
    assert user.startswith("Language: python\n")
    assert prompt.stop[0] == CODE_END and list(STOP_WORDS) == prompt.stop
    assert {"<PREFIX>", "</PREFIX>", "<SUFFIX>", "</SUFFIX>"} <= set(prompt.stop)
    # Braces in code must survive (no str.format on user text).
    assert "{x}" in build_chat_prompt("a = {x}", "").messages[1]["content"]


def test_chat_prompt_examples_clean_to_their_middles() -> None:
    # The worked examples in the system prompt must themselves clean up correctly.
    system = build_chat_prompt("", "").messages[0]["content"]
    blocks = system.split("Example ")[1:]
    assert len(blocks) == 2
    for block in blocks:
        prefix = block.split("<PREFIX>")[1].split("</PREFIX>")[0]
        suffix = block.split("<SUFFIX>")[1].split("</SUFFIX>")[0]
        answer = block.split("Answer:\n")[1]
        middle = clean_chat_completion(answer, prefix=prefix, suffix=suffix)
        assert middle in ("values)", "Math.max(x, lo)")


def test_native_fim_fields() -> None:
    assert native_fim_fields("a", "b") == {"prompt": "a", "suffix": "b"}


# ---------------------------------------------------------------- token budget


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("x" * 4000) == 1000
    # Bytes, not characters: 3 CJK characters are 9 bytes -> 3 tokens, not 1.
    assert estimate_tokens("中文字") == 3
    assert estimate_tokens("\ud800") == 1  # a lone surrogate does not raise


def test_estimate_tokens_of_long_ascii_and_mixed_text() -> None:
    # Its speed is measured in benchmarks/bench_hot_functions.py.
    text = "def f(x):\n    return x + 1\n" * 2000  # ~54 kB
    assert estimate_tokens(text) == -(-len(text.encode()) // 4)
    mixed = text + "中文字" * 10
    assert estimate_tokens(mixed) == -(-len(mixed.encode()) // 4)


def test_trim_context_keeps_short_text() -> None:
    assert trim_context("abc\n", "def") == ("abc\n", "def")


def test_trim_prefix_on_line_boundary_within_budget() -> None:
    prefix = "".join(f"line {i:05d} = {i}\n" for i in range(5000)) + "cursor = "
    out = trim_prefix(prefix, 100)
    assert estimate_tokens(out) <= 100
    assert prefix.endswith(out) and prefix[len(prefix) - len(out) - 1] == "\n"
    assert estimate_tokens(out) >= 75  # at most a quarter of the budget wasted


def test_trim_suffix_on_line_boundary_within_budget() -> None:
    suffix = "".join(f"line {i:05d} = {i}\n" for i in range(5000))
    out = trim_suffix(suffix, 100)
    assert estimate_tokens(out) <= 100
    assert suffix.startswith(out) and out.endswith("\n")
    assert estimate_tokens(out) >= 75


def test_trim_minified_line_cuts_mid_line() -> None:
    minified = "a=1;" * 20000
    out = trim_prefix("x\n" + minified, 100)
    assert estimate_tokens(out) == 100 and minified.endswith(out)
    out = trim_suffix(minified + "\nx", 100)
    assert estimate_tokens(out) == 100 and minified.startswith(out)


def test_trim_never_splits_characters() -> None:
    text = "é漢🙂" * 3000
    for budget in (1, 7, 100, 333):
        head, tail = trim_suffix(text, budget), trim_prefix(text, budget)
        assert text.startswith(head) and text.endswith(tail)
        assert estimate_tokens(head) <= budget and estimate_tokens(tail) <= budget
        head.encode("utf-8")


def test_trim_default_budget_is_original(battles: list[dict[str, str]]) -> None:
    assert (MAX_PREFIX_TOKENS, MAX_SUFFIX_TOKENS) == (6144, 2048)
    longest = max(battles, key=lambda r: len(r["prefix"]))
    p, s = trim_context(longest["prefix"], longest["suffix"])
    assert estimate_tokens(p) <= 6144 and estimate_tokens(s) <= 2048
    assert longest["prefix"].endswith(p) and longest["suffix"].startswith(s)
    assert len(p) < len(longest["prefix"])  # the 30 kB prefix does get trimmed


def test_trim_real_sample_small_budget(battles: list[dict[str, str]]) -> None:
    for row in battles:
        p, s = trim_context(
            row["prefix"], row["suffix"], max_prefix_tokens=64, max_suffix_tokens=32
        )
        assert row["prefix"].endswith(p) and row["suffix"].startswith(s)
        assert estimate_tokens(p) <= 64 and estimate_tokens(s) <= 32
        # The cursor line survives whenever it fits.
        head = row["prefix"].rsplit("\n", 1)[-1]
        if estimate_tokens(head) <= 48:
            assert p.endswith(head)
