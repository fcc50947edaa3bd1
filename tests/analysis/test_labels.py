"""Tests for analysis.labels.label_context: all slice labels together, on real battles."""

from __future__ import annotations

import re
from collections import Counter

from analysis.labels import (
    CONTEXT_BUCKETS,
    LABELER_VERSION,
    NATURAL_LANGUAGES,
    PROGRAMMING_LANGUAGES,
    TASK_TYPES,
    SliceLabels,
    label_context,
)
from analysis.labels import natural_language as nl
from analysis.labels import task_type as tt
from tests.analysis.data.sample_battles import load_sample_battles


def assert_valid(labels: SliceLabels) -> None:
    assert labels.programming_language in PROGRAMMING_LANGUAGES
    assert labels.natural_language in NATURAL_LANGUAGES
    assert isinstance(labels.context_tokens, int) and labels.context_tokens >= 0
    assert labels.context_bucket in CONTEXT_BUCKETS
    assert labels.task_type in TASK_TYPES


def test_every_sample_battle_gets_every_label():
    battles = load_sample_battles()
    assert len(battles) == 112
    results = [label_context(file_type=None, prefix=b.prefix, suffix=b.suffix) for b in battles]
    for labels in results:
        assert_valid(labels)
    # The sample carries no fileType: every battle is "other" for programming language.
    assert {r.programming_language for r in results} == {"other"}
    natural = Counter(r.natural_language for r in results)
    buckets = Counter(r.context_bucket for r in results)
    tasks = Counter(r.task_type for r in results)
    print(f"\nnatural languages: {dict(natural.most_common())}")
    print(f"context buckets:   {dict(buckets.most_common())}")
    print(f"task types:        {dict(tasks.most_common())}")
    # Mostly English comments, a few other languages, and code with no prose at all.
    assert natural.most_common(1)[0][0] == "en"
    assert natural["unknown"] >= 10
    assert len(set(natural) - {"en", "unknown"}) >= 2
    # Contexts span several buckets (the sample goes from 23 to ~36k characters).
    assert {"<1k", "1-4k", "4-16k"} <= set(buckets)


def test_known_natural_languages_in_sample():
    by_index = {b.index: b for b in load_sample_battles()}

    def natural(index: int) -> str:
        b = by_index[index]
        return label_context(file_type=None, prefix=b.prefix, suffix=b.suffix).natural_language

    assert natural(108) == "fr"  # Django form with French comments
    assert natural(86) == "es"  # XML with a Spanish comment
    assert natural(9) == "en"  # tkinter paint app, English comments
    assert natural(24) == "unknown"  # suffix is only `mainloop()`


def test_context_length_on_sample_matches_text_size():
    for b in load_sample_battles():
        labels = label_context(file_type=None, prefix=b.prefix, suffix=b.suffix)
        n_bytes = len(b.prefix.encode()) + len(b.suffix.encode())
        assert n_bytes / 4 <= labels.context_tokens <= n_bytes / 4 + 2


def test_empty_context():
    labels = label_context(file_type=None, prefix="", suffix="")
    assert labels == SliceLabels(
        programming_language="other",
        natural_language="unknown",
        context_tokens=0,
        context_bucket="<1k",
        task_type="other",
    )


def test_unknown_and_odd_file_types():
    for file_type in ("", "  ", "no-such-language", "weird.ext", None):
        labels = label_context(file_type=file_type, prefix="x = 1\n", suffix="")
        assert labels.programming_language == "other"
        assert_valid(labels)


def test_file_type_is_normalised():
    labels = label_context(
        file_type="typescriptreact",
        prefix="import React from 'react';\n// Render the list of saved searches\n",
        suffix="export default App;\n",
    )
    assert labels.programming_language == "typescript"
    assert labels.natural_language == "en"
    assert labels.task_type == "frontend"
    assert labels.as_dict() == {
        "programming_language": "typescript",
        "natural_language": "en",
        "context_tokens": labels.context_tokens,
        "context_bucket": "<1k",
        "task_type": "frontend",
    }


def test_labeler_version_names_every_label():
    assert re.fullmatch(r"pl\w+\.nl\w+\.ctx\w+\.task\w+", LABELER_VERSION)
    assert f"nl{nl.VERSION}" in LABELER_VERSION
    assert f"task{tt.VERSION}" in LABELER_VERSION


def _big_context(n_chars: int) -> tuple[str, str]:
    """~n_chars of real code: sample battles concatenated, largest first."""
    battles = sorted(load_sample_battles(), key=lambda b: -len(b.prefix))
    text = ""
    for b in battles:
        text += b.prefix + "\n"
        if len(text) >= n_chars:
            break
    return text[:n_chars], battles[0].suffix[:4000]


def test_huge_context_is_labelled_from_bounded_windows(monkeypatch):
    # What bounds the cost of a 100 KB context: each labeller scans a fixed window of it,
    # so its work does not grow with the context (timings: benchmarks/bench_labels.py).
    prefix, suffix = _big_context(100_000)
    assert len(prefix) == 100_000
    seen: dict[str, list[int]] = {"task": [], "comments": [], "detector": []}
    window, extract, detect = tt._window, nl.extract_comment_text, nl.language_of_text

    def task_window(p, s):
        text = window(p, s)
        seen["task"].append(len(text))
        return text

    def comments(code):
        seen["comments"].append(len(code))
        return extract(code)

    def detector(text):
        seen["detector"].append(len(text))
        return detect(text)

    monkeypatch.setattr(tt, "_window", task_window)
    monkeypatch.setattr(nl, "extract_comment_text", comments)
    monkeypatch.setattr(nl, "language_of_text", detector)
    labels = label_context(file_type="typescript", prefix=prefix, suffix=suffix)
    assert labels.task_type in tt.TASK_TYPES
    assert seen["task"] and max(seen["task"]) <= tt.HEAD_WINDOW + tt.TAIL_WINDOW + 1 + (
        tt.SUFFIX_WINDOW
    )
    assert seen["comments"] and max(seen["comments"]) <= max(nl.PREFIX_WINDOW, nl.SUFFIX_WINDOW)
    assert all(n <= nl.MAX_TEXT_CHARS + 100 for n in seen["detector"])
