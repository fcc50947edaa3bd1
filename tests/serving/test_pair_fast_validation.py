"""The fast validator agrees with the pair serializers (`/create_pair`, `/create_edit_pair`).

As for the vote routes (tests/ingest/test_validation.py): for every mutated body the
fast path either declines, and the serializer decides with its own errors, or returns
exactly the serializer's validated data; and it takes the bodies the extension sends.
"""

from __future__ import annotations

import contextlib
import copy
import random

import pytest

from ingest.validation import FastValidator, validator_for
from serving.serializers import CreateEditPairSerializer, CreatePairSerializer
from tests.ingest.test_validation import MISSING, ODD, _agree

# Values only the pair fields care about: booleans as DRF spells them, tag lists.
PAIR_ODD = [
    *ODD,
    "true",
    "false",
    "yes",
    "off",
    ["python"],
    ["x" * 64],
    ["x" * 65],
    [""],
    [None],
    [1],
    ["a"] * 32,
    ["a"] * 33,
    "python",
    {"tag": "python"},
    "x" * 10_000,
    "x" * 10_001,
]


def _pair(**extra) -> dict:
    body = {
        "pairId": "pair-1",
        "userId": "vscode-machine-id",
        "prefix": "def add(a, b):\n    return ",
        "suffix": "\n\nprint(add(1, 2))\n",
        "midSpan": False,
        "temperature": 0.5,
        "maxTokens": 512,
        "topP": 0.9,
        "maxLines": 20,
        "privacy": "Private",
        "modelTags": [],
    }
    return {**body, **extra}


def _edit(**extra) -> dict:
    body = {
        "pairId": "edit-1",
        "userId": "vscode-machine-id",
        "prefix": "x = 1\n",
        "suffix": "\n",
        "codeToEdit": "def f(a):\n    return a\n",
        "userInput": "add a docstring",
        "language": "python",
        "privacy": "Research",
        "modelTags": ["chat"],
    }
    return {**body, **extra}


BODIES = {
    CreatePairSerializer: [
        _pair(),
        _pair(modelTags=["python", "fast"], midSpan=True, privacy="Research"),
        {k: v for k, v in _pair().items() if k in ("userId", "prefix", "privacy")},
        _pair(prefix="a\x00b", suffix="", temperature=2, topP=0, maxLines=1),
    ],
    CreateEditPairSerializer: [
        _edit(),
        _edit(language="", maxLines=3, modelTags=[]),
        {k: v for k, v in _edit().items() if k not in ("pairId", "suffix", "modelTags")},
    ],
}


def _paths(body: dict) -> list[tuple]:
    paths = [(k,) for k in body]
    for key, value in body.items():
        if isinstance(value, list):
            paths += [(key, i) for i in range(len(value))]
    return paths


def _set(body: dict, path: tuple, value) -> dict:
    body = copy.deepcopy(body)
    target = body
    for key in path[:-1]:
        target = target[key]
    if value is MISSING:
        if isinstance(target, list):
            del target[path[-1]]
        else:
            target.pop(path[-1], None)
    else:
        target[path[-1]] = value
    return body


@pytest.mark.parametrize("cls", list(BODIES), ids=lambda c: c.__name__)
def test_pair_serializers_compile_and_take_ordinary_bodies(db, cls):
    assert FastValidator(cls)._check is not None
    for body in BODIES[cls]:
        fast, ok = _agree(cls, body)
        assert ok and fast, body


def test_default_tag_list_is_fresh_each_time(db):
    body = {k: v for k, v in _pair().items() if k != "modelTags"}
    first = validator_for(CreatePairSerializer).fast(body)
    assert first is not None and first["modelTags"] == []
    first["modelTags"].append("changed")
    second = validator_for(CreatePairSerializer).fast(body)
    assert second is not None and second["modelTags"] == []


@pytest.mark.parametrize("cls", list(BODIES), ids=lambda c: c.__name__)
def test_fast_path_agrees_field_by_field(db, cls):
    taken = declined = 0
    for body in BODIES[cls]:
        for path in _paths(body):
            for value in PAIR_ODD:
                fast, ok = _agree(cls, _set(body, path, value))
                taken += fast
                declined += not ok
    assert taken > 0 and declined > 0


@pytest.mark.parametrize("cls", list(BODIES), ids=lambda c: c.__name__)
def test_fast_path_agrees_on_random_combinations(db, cls):
    rng = random.Random(3)
    for body in BODIES[cls]:
        paths = _paths(body)
        for _ in range(150):
            mutated = body
            for path in rng.sample(paths, k=min(len(paths), rng.randint(2, 3))):
                with contextlib.suppress(KeyError, IndexError, TypeError):
                    mutated = _set(mutated, path, rng.choice(PAIR_ODD))
            _agree(cls, mutated)
