"""The cache on Redis stores JSON, never a pickle: values come back with their types, counters
stay counters, and an entry the site did not write (a pickle) is a miss, not code run."""

from __future__ import annotations

import datetime as dt
import os
import pickle

import pytest
from django.core.cache import cache
from django_redis import get_redis_connection

from core.cache_serializer import JsonSerializer
from leaderboard.controlled_context import ContextChoice
from leaderboard.ignored_pairs import IgnoredSummary


class _Canary:
    """Unpickling this writes a file: the proof that a pickle was run."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.fixture
def redis_cache(settings):
    if not settings.REDIS_URL:
        pytest.skip("needs the Redis cache")  # make test always sets REDIS_URL
    return cache


def test_values_come_back_as_they_were_stored(redis_cache):
    values = {
        "page": b"<!doctype html>\x00\x1f\x8b",
        "board": {"models": [{"model": "a", "rating": 1000.5, "rank": None}], "sid": 3},
        "at": dt.datetime(2026, 1, 31, tzinfo=dt.UTC),
        "summary": IgnoredSummary(per_model={"a": (3, 1)}, shown=3, ignored=1, window_minutes=60),
        "choice": ContextChoice(("a", "b_ctx"), 10, None, -0.5),
        "count": 7,
        "flag": True,
    }
    for key, value in values.items():
        cache.set(key, value, 60)
    for key, value in values.items():
        got = cache.get(key)
        assert got == value and type(got) is type(value), key
    assert cache.incr("count") == 8  # ints stay raw: Redis counts them


def test_the_bytes_in_redis_are_json_not_pickle(redis_cache):
    cache.set("board", {"a": [1, 2]}, 60)
    raw = get_redis_connection("default").get(cache.make_key("board"))
    assert raw == b'j{"a":[1,2]}'


def test_a_pickle_written_into_redis_is_a_miss_and_never_run(redis_cache, tmp_path):
    canary = tmp_path / "pickle-was-run"
    client = get_redis_connection("default")
    client.set(cache.make_key("lb:board"), pickle.dumps(_Canary(str(canary))))
    assert cache.get("lb:board") is None
    assert cache.get("lb:board", "default") is None  # present but unreadable: a miss all the same
    assert not canary.exists()


def test_the_serializer_alone():
    s = JsonSerializer()
    assert s.dumps(5) == 5 and s.loads(b"5") == 5
    assert s.loads(s.dumps(b"123")) == b"123"  # bytes that look like a number stay bytes
    assert s.loads(s.dumps(False)) is False
    assert s.loads(b"j{not json") is None
    assert s.loads(pickle.dumps({"a": 1})) is None
    assert not os.environ.get("NEVER_SET_BY_A_PICKLE")
