"""Property tests: every labeller takes any Unicode text in every code field without raising.

A labeller that raises on some input makes every vote carrying it fail (the NBSP line of
issue 12 did, on every route); ingest now guards them, but they must not need it.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.labels import (
    CONTEXT_BUCKETS,
    NATURAL_LANGUAGES,
    PROGRAMMING_LANGUAGES,
    TASK_TYPES,
    UNKNOWN,
    classify_task_type,
    context_bucket,
    context_tokens,
    detect_natural_language,
    label_context,
    normalize_language,
)
from analysis.labels import task_type as tt
from analysis.labels.programming_language import OTHER

# Any code point, surrogates included (what a JSON body may carry), with lines made of
# unusual whitespace and separators mixed in often.
ODD = ["\u00a0", "\u3000", "\u2003", "\u001f", "\u001c", "\u0085", "\u2028", "\r", "\t", "-"]
text = st.text(st.characters(codec=None), max_size=300) | st.lists(
    st.sampled_from([*ODD, "\n", "x", "import os", "def f():", "#"]), max_size=40
).map("".join)
file_types = st.none() | st.text(max_size=40) | st.sampled_from(["python", "typescriptreact", ""])
LANGS = {*PROGRAMMING_LANGUAGES, OTHER}
SETTINGS = settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(file_type=file_types, prefix=text, suffix=text)
def test_label_context_takes_any_text(file_type, prefix, suffix):
    labels = label_context(file_type=file_type, prefix=prefix, suffix=suffix)
    assert labels.programming_language in LANGS
    assert labels.natural_language in {*NATURAL_LANGUAGES, UNKNOWN}
    assert labels.context_bucket in CONTEXT_BUCKETS
    assert labels.task_type in TASK_TYPES
    assert labels.context_tokens >= 0


@SETTINGS
@given(file_type=file_types)
def test_programming_language_takes_any_file_type(file_type):
    assert normalize_language(file_type) in LANGS


@SETTINGS
@given(prefix=text, suffix=text, language=st.sampled_from(sorted(LANGS)))
def test_natural_language_takes_any_text(prefix, suffix, language):
    found = detect_natural_language(prefix=prefix, suffix=suffix, programming_language=language)
    assert found in {*NATURAL_LANGUAGES, UNKNOWN}


@SETTINGS
@given(prefix=text, suffix=text)
def test_context_length_takes_any_text(prefix, suffix):
    tokens = context_tokens(prefix=prefix, suffix=suffix)
    assert tokens >= 0 and context_bucket(tokens) in CONTEXT_BUCKETS


@SETTINGS
@given(prefix=text, suffix=text, language=st.sampled_from(sorted(LANGS)))
def test_task_type_takes_any_text(prefix, suffix, language):
    assert classify_task_type(programming_language=language, prefix=prefix, suffix=suffix) in (
        TASK_TYPES
    )
    features = tt.extract_features(programming_language=language, prefix=prefix, suffix=suffix)
    assert all(head and not head.isspace() for head in features.line_heads)
