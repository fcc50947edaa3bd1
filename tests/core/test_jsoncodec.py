"""The JSON the site keeps in Redis: every value comes back equal, with its types; only the
site's own dataclasses are rebuilt, and foreign tags are refused."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest

from analysis.grouping import GroupedCounts
from analysis.leaderboard import compute_leaderboard
from core import jsoncodec
from leaderboard.fanout import SliceJob, _Result, _Spec
from leaderboard.fitting import FitSettings


def _same(a, b) -> None:
    assert type(a) is type(b)
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)  # NaN equal to NaN, exact otherwise
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b)
    elif hasattr(a, "__dataclass_fields__"):
        for name in a.__dataclass_fields__:
            _same(getattr(a, name), getattr(b, name))
    else:
        assert a == b


def roundtrip(value):
    return jsoncodec.loads(jsoncodec.dumps(value))


def test_plain_and_tagged_values_come_back_with_their_types():
    value = {
        "text": "ünïcode \U0001f600",
        "ints": [1, -2, 10**20],
        "floats": (0.1, float("nan"), float("inf"), -float("inf")),
        "bytes": b"\x00\xff gzip",
        "int keys": {1: "a", (2, 3): "b"},
        "sets": ({1, 2}, frozenset({"x"})),
        "when": dt.datetime(2026, 12, 1, 10, 28, tzinfo=dt.UTC),
        "day": dt.date(2026, 1, 31),
        "array": np.array([[1.5, np.nan], [np.inf, -0.0]]),
        "ints array": np.arange(5, dtype=np.int64),
        "scalar": np.float64(2.5),
        "flag": np.bool_(True),
        "__t": "a user's own key named like the tag",
        "nothing": None,
    }
    _same(value, roundtrip(value))


def test_a_slice_spec_and_its_board_travel_exactly():
    counts = GroupedCounts(
        models=("a", "b", "c"),
        a=np.array([0, 1, 0]),
        b=np.array([1, 2, 2]),
        outcome=np.array([0, 1, 2]),
        count=np.array([30, 20, 5]),
        user=np.array([1, 2, 3]),
    )
    spec = _Spec(
        SliceJob("language:python", counts, 50),
        FitSettings(None, 1000.0, "bootstrap", 7, ("a", "b", "c")),
    )
    back = roundtrip(spec)
    _same(spec, back)
    board = compute_leaderboard(counts, rounds=50, seed=3, robustness_places=2)
    result = roundtrip(_Result(board, "", "host:1:2"))
    _same(board, result.board)
    assert result.board.table() == board.table()


class Foreign:
    pass


def test_other_types_are_not_written_and_foreign_tags_not_read():
    with pytest.raises(TypeError):
        jsoncodec.dumps(Foreign())
    with pytest.raises(TypeError):
        jsoncodec.dumps(np.array([object()]))
    for tagged in (
        {"__t": "dataclass", "cls": "subprocess:CompletedProcess", "fields": {}},
        {"__t": "dataclass", "cls": "os:system", "fields": {}},
        {"__t": "dataclass", "cls": "leaderboard.fitting:fit_board", "fields": {}},
        {"__t": "dataclass", "cls": "leaderboard.fitting:FitSettings", "fields": {"x": 1}},
        {"__t": "ndarray", "dtype": "|O", "shape": [1], "b64": ""},
        {"__t": "pickle", "data": ""},
    ):
        with pytest.raises(ValueError):
            jsoncodec.loads(json.dumps(tagged))
