"""A lone surrogate in a field of a keyed vote is a 400 whose JSON names it, never a 500;
in a code field it is replaced instead and the vote stored (tests/core/test_fields.py).

Error messages quote the value sent; DRF's renderer could not encode a lone surrogate as
UTF-8 and answered 500 while rendering the 400 (found by test_vote_properties).
"""

from __future__ import annotations

import json

import pytest

from ingest.models import Battle
from tests.reliability.test_vote_properties import native

CODE_FIELDS = {"prefix", "suffix", "completion_a", "completion_b"}


@pytest.mark.parametrize("field", sorted(set(native("x")) - CODE_FIELDS))
def test_a_lone_surrogate_in_a_field_is_a_readable_4xx(field, keyed_api, models, settings):
    settings.ARENA_THROTTLE_RATES = {name: "1000000/min" for name in settings.ARENA_THROTTLE_RATES}
    body = native(f"p-surrogate-{field}")
    body[field] = "a\ud800b"
    before = Battle.objects.count()
    r = keyed_api.post("/api/v1/battles", data=json.dumps(body), content_type="application/json")
    assert 400 <= r.status_code < 500, (r.status_code, r.content[:300])
    assert json.loads(r.content)  # valid JSON, the surrogate escaped
    assert Battle.objects.count() == before


@pytest.mark.parametrize("field", sorted(CODE_FIELDS))
def test_a_lone_surrogate_in_a_code_field_is_stored_replaced(field, keyed_api, models):
    body = native(f"p-surrogate-{field}")
    body[field] = "a\ud800b"
    r = keyed_api.post("/api/v1/battles", data=json.dumps(body), content_type="application/json")
    assert r.status_code == 201, r.content[:300]
    assert Battle.objects.filter(pair_id=f"p-surrogate-{field}").exists()
