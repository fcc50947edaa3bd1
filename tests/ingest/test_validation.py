"""The fast validator (ingest.validation) agrees with the DRF serializers it stands in for.

For many valid and invalid bodies of every vote route, either the fast path declines (and
the serializer, with its own error messages, decides) or it returns exactly the
serializer's validated data. It must also take the ordinary bodies, or it saves nothing.
"""

from __future__ import annotations

import contextlib
import copy
import random

import pytest

from catalogue.models import ModelAlias
from ingest.extension_serializers import (
    AddCompletionSerializer,
    CompletionOutcomeSerializer,
    EditOutcomeSerializer,
    SingleOutcomeSerializer,
    UserIdSerializer,
)
from ingest.serializers import BattleSerializer
from ingest.validation import FastValidator, validator_for
from tests.ingest.payloads import completion_item, edit_payload, outcome_payload, vote

MISSING = object()
ODD = [
    MISSING,
    None,
    "",
    " ",
    "  padded  ",
    "x",
    "x" * 64,
    "x" * 65,
    "x" * 128,
    "x" * 129,
    "x" * 256,
    "x" * 257,
    "a\x00b",
    "0\r",
    "\tp1",
    "p\x1b[31m1",
    "p\x85",
    "p\u00a0",
    "a\ud800b",
    "é ü",
    0,
    1,
    -1,
    2,
    -2,
    1.0,
    1.5,
    -0.5,
    120,
    120.5,
    120000,
    120000.5,
    1e9,
    10**20,
    float("nan"),
    float("inf"),
    True,
    False,
    [],
    {},
    "1",
    "0",
    "812.5",
    "model_a",
    "model_b",
    "tie",
    "both_bad",
    "edit",
    "completion",
    "Research",
    "Private",
    "gpt-4o-2024-08-06",
    " gpt-4o-2024-08-06 ",
    "gpt-4o",
    "codestral-2405",
    "no-such-model",
]


def _bodies():
    single = completion_item(0, "gpt-4o-2024-08-06")
    return {
        BattleSerializer: [
            vote(),
            vote(prefix="def f(x):\n", suffix="\n", completion_a="return x", privacy="Research"),
            vote(kind="edit", outcome="both_bad", code_to_edit="x = 1", user_input="rename"),
            vote(prefix_chars=10, suffix_chars=0, latency_a_ms=None, repo_url="https://x/y"),
            vote(completion_a_chars=12, completion_b_chars=0),
            vote(completion_a_chars=None, completion_b_chars=100_000_000),
        ],
        CompletionOutcomeSerializer: [outcome_payload(0), outcome_payload(1, "Research")],
        EditOutcomeSerializer: [edit_payload(0), edit_payload(-2)],
        AddCompletionSerializer: [{**single, "pairId": "pair-1"}],
        SingleOutcomeSerializer: [{k: v for k, v in single.items() if k != "privacy"}],
        UserIdSerializer: [{"userId": "vscode-machine-id"}],
    }


def _paths(body: dict) -> list[tuple]:
    """Every field of a body (and of its items) as a path of keys."""
    paths = [(k,) for k in body]
    for key, value in body.items():
        if isinstance(value, list):
            for i, item in enumerate(value):
                paths += [(key, i, k) for k in item]
    return paths


def _set(body: dict, path: tuple, value) -> dict:
    body = copy.deepcopy(body)
    target = body
    for key in path[:-1]:
        target = target[key]
    if value is MISSING:
        target.pop(path[-1], None)
    else:
        target[path[-1]] = value
    return body


def _agree(cls, body) -> tuple[bool, bool]:
    """(fast path took it, serializer took it); fails when the two differ."""
    fast = validator_for(cls).fast(copy.deepcopy(body))
    s = cls(data=copy.deepcopy(body))
    ok = s.is_valid()
    if fast is not None:
        assert ok, (cls.__name__, body, s.errors)
        assert fast == s.validated_data, (cls.__name__, body)
    return fast is not None, ok


@pytest.fixture
def catalogue(models):
    ModelAlias.objects.create(key="gpt-4o", model=models["gpt-4o-2024-08-06"])
    return models


@pytest.mark.parametrize("cls", list(_bodies()), ids=lambda c: c.__name__)
def test_every_route_compiles_and_takes_ordinary_bodies(catalogue, cls):
    assert FastValidator(cls)._check is not None
    for body in _bodies()[cls]:
        fast, ok = _agree(cls, body)
        assert ok and fast, body


@pytest.mark.parametrize("cls", list(_bodies()), ids=lambda c: c.__name__)
def test_fast_path_agrees_with_the_serializer_field_by_field(catalogue, cls):
    taken = 0
    for body in _bodies()[cls]:
        for path in _paths(body):
            for value in ODD:
                fast, _ok = _agree(cls, _set(body, path, value))
                taken += fast
    assert taken > 0


@pytest.mark.parametrize("cls", list(_bodies()), ids=lambda c: c.__name__)
def test_fast_path_agrees_on_random_combinations(catalogue, cls):
    rng = random.Random(2)
    for body in _bodies()[cls]:
        paths = _paths(body)
        for _ in range(150):
            mutated = body
            for path in rng.sample(paths, k=min(len(paths), rng.randint(2, 3))):
                # An earlier mutation may have removed or replaced the container.
                with contextlib.suppress(KeyError, IndexError, TypeError):
                    mutated = _set(mutated, path, rng.choice(ODD))
            _agree(cls, mutated)


def test_shape_errors_fall_back(catalogue):
    for body in ([vote()], "text", None, 3, {"completionItems": "x"}):
        assert validator_for(BattleSerializer).fast(body) is None
        assert validator_for(CompletionOutcomeSerializer).fast(body) is None
    reordered = outcome_payload(0)
    reordered["completionItems"].reverse()
    fast, ok = _agree(CompletionOutcomeSerializer, reordered)
    assert fast and ok


def test_input_is_not_changed(catalogue):
    body = outcome_payload(0)
    body["completionItems"].reverse()
    before = copy.deepcopy(body)
    assert validator_for(CompletionOutcomeSerializer).fast(body) is not None
    assert body == before
