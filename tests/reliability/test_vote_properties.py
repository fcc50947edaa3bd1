"""Property tests over whole vote bodies, on every vote route: never a 5xx; either 2xx and
stored, or 4xx and nothing stored.

Each example starts from a valid body of the route and replaces any of its fields (top
level or inside an item) with arbitrary JSON: any Unicode text (lone surrogates, NUL,
whitespace-only lines), numbers of every kind, nulls, lists, objects, or drops it.
"""

from __future__ import annotations

import json
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.models import Battle, CompletionLog, SingleOutcome
from tests.ingest.helpers import row_counts
from tests.ingest.payloads import completion_item, edit_payload, outcome_payload

ODD = ["\u00a0", "\u3000", "\u2003", "\u001f", "\x00", "\ud800", "\n", "x", "def f():"]
texts = st.text(st.characters(codec=None), max_size=60) | st.lists(
    st.sampled_from(ODD), max_size=12
).map("".join)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | texts
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
DROP = object()
replacement = json_values | st.just(DROP)


def native(pair_id: str) -> dict:
    return {
        "pair_id": pair_id,
        "user_id": "user-1",
        "model_a": "gpt-4o-2024-08-06",
        "model_b": "codestral-2405",
        "outcome": "model_a",
        "privacy": "Research",
        "file_type": "python",
        "latency_a_ms": 800.0,
        "prefix": "def f():\n",
        "suffix": "\n",
        "completion_a": "    return 1",
        "completion_b": "    return 2",
    }


def _mutate(body: dict, changes: dict) -> dict:
    out = dict(body)
    for key, value in changes.items():
        if value is DROP:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def mutated(base: dict, *, item_key: str | None = None):
    keys = st.sampled_from(sorted(base)) | texts
    changes = st.dictionaries(keys, replacement, max_size=4)
    if item_key is None:
        return changes.map(lambda c: _mutate(base, c))
    item_keys = st.sampled_from(sorted(base[item_key][0]))
    item_changes = st.dictionaries(item_keys, replacement, max_size=3)

    def build(c, i0, i1):
        body = _mutate(base, c)
        if isinstance(body.get(item_key), list) and len(body[item_key]) == 2:
            body[item_key] = [_mutate(base[item_key][0], i0), _mutate(base[item_key][1], i1)]
        return body

    return st.builds(build, changes, item_changes, item_changes)


def stored(route: str, body: dict) -> bool:
    if route in ("/api/v1/battles",):
        return Battle.objects.filter(pair_id=body.get("pair_id")).exists()
    if route == "/api/v1/battles/batch":
        return all(Battle.objects.filter(pair_id=b["pair_id"]).exists() for b in body["battles"])
    if route in ("/add_completion_outcome", "/add_edit_outcome"):
        return Battle.objects.filter(pair_id=body.get("pairId")).exists()
    if route == "/add_completion":
        return CompletionLog.objects.filter(completion_id=body.get("completionId")).exists()
    return SingleOutcome.objects.filter(completion_id=body.get("completionId")).exists()


ROUTES = {
    "/api/v1/battles": ("post", lambda: native(f"p-{uuid.uuid4().hex}"), None),
    "/api/v1/battles/batch": (
        "post",
        lambda: {"battles": [native(f"b-{uuid.uuid4().hex}"), native(f"b-{uuid.uuid4().hex}")]},
        "battles",
    ),
    "/add_completion_outcome": (
        "put",
        lambda: outcome_payload(privacy="Research", pairId=f"o-{uuid.uuid4().hex}"),
        "completionItems",
    ),
    "/add_edit_outcome": (
        "put",
        lambda: {**edit_payload(0), "pairId": f"e-{uuid.uuid4().hex}"},
        "responseItems",
    ),
    "/add_completion": (
        "put",
        lambda: completion_item(0, "gpt-4o-2024-08-06", completionId=f"c-{uuid.uuid4().hex}"),
        None,
    ),
    "/add_single_outcome": (
        "put",
        lambda: {
            **completion_item(0, "codestral-2405", completionId=f"s-{uuid.uuid4().hex}"),
            "version": "0.2.2",
        },
        None,
    ),
}


@pytest.mark.parametrize("route", list(ROUTES))
@pytest.mark.parametrize("keyed", [False, True], ids=["anonymous", "keyed"])
def test_any_body_is_2xx_and_stored_or_4xx_and_nothing_stored(
    route, keyed, api, keyed_api, models, settings
):
    settings.ARENA_THROTTLE_RATES = {name: "1000000/min" for name in settings.ARENA_THROTTLE_RATES}
    method, make_base, item_key = ROUTES[route]
    client = keyed_api if keyed else api

    @settings_for_route
    @given(data=st.data())
    def check(data):
        body = data.draw(mutated(make_base(), item_key=item_key))
        try:
            raw = json.dumps(body)
        except (ValueError, TypeError):  # e.g. NaN is fine, but a dict key must be text
            return
        before = row_counts()
        r = getattr(client, method)(route, data=raw, content_type="application/json")
        assert r.status_code < 500, (r.status_code, r.content[:500])
        if 200 <= r.status_code < 300:
            assert stored(route, body), (route, r.content[:300])
        else:
            assert 400 <= r.status_code < 500
            assert row_counts() == before, (r.status_code, r.content[:300])

    check()


settings_for_route = settings(
    max_examples=120,
    deadline=None,
    database=None,  # no example files in the work tree
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=False,
)
