"""Tests for analysis.labels.context_length: token estimate and buckets."""

from __future__ import annotations

import pytest

from analysis.labels.context_length import (
    CONTEXT_BUCKETS,
    context_bucket,
    context_tokens,
    estimate_tokens,
)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("x" * 4000, 1000), ("读", 1), ("读读", 2)],
)
def test_estimate_is_utf8_bytes_over_four_rounded_up(text, tokens):
    assert estimate_tokens(text) == tokens


def test_context_tokens_adds_prefix_and_suffix():
    assert context_tokens(prefix="a" * 400, suffix="b" * 8) == 102
    assert context_tokens(prefix="", suffix="") == 0


def test_lone_surrogate_does_not_raise():
    assert estimate_tokens("\ud800abc") == 2


@pytest.mark.parametrize(
    ("tokens", "bucket"),
    [
        (0, "<1k"),
        (999, "<1k"),
        (1_000, "1-4k"),
        (3_999, "1-4k"),
        (4_000, "4-16k"),
        (15_999, "4-16k"),
        (16_000, ">16k"),
        (10_000_000, ">16k"),
    ],
)
def test_bucket_edges(tokens, bucket):
    assert context_bucket(tokens) == bucket


def test_bucket_list_is_ordered_and_complete():
    assert CONTEXT_BUCKETS == ("<1k", "1-4k", "4-16k", ">16k")
    seen = [context_bucket(t) for t in range(0, 20_000, 250)]
    assert sorted(set(seen), key=CONTEXT_BUCKETS.index) == list(CONTEXT_BUCKETS)


def test_negative_tokens_rejected():
    with pytest.raises(ValueError):
        context_bucket(-1)
