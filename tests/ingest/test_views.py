"""Native v1 ingest: one battle, replays, conflicts and every kind of bad input."""

from __future__ import annotations

import json

import pytest

from catalogue.models import ModelAlias
from ingest.models import Battle, CodeContext, Outcome
from tests.ingest.helpers import assert_rejected, row_counts
from tests.ingest.payloads import vote

URL = "/api/v1/battles"


@pytest.fixture
def post(api, models):
    def _post(body, **kw):
        return api.post(URL, data=json.dumps(body), content_type="application/json", **kw)

    return _post


def test_valid_vote_is_stored_once_with_positions(post, models):
    r = post(vote())
    assert r.status_code == 201, r.content
    assert r.json()["status"] == "created"
    b = Battle.objects.get(pair_id="p-1")
    assert b.model_a.key == "gpt-4o-2024-08-06" and b.model_b.key == "codestral-2405"
    assert b.outcome == Outcome.A
    assert b.language == "python"
    assert b.latency_a_ms == 812.5
    assert b.user_hash != "machine-123" and len(b.user_hash) == 64
    assert b.source == "api"


def test_replay_answers_200_and_stores_nothing_new(post):
    assert post(vote()).status_code == 201
    before = row_counts()
    r = post(vote(client_version="9.9"))
    assert r.status_code == 200 and r.json()["status"] == "duplicate"
    assert row_counts() == before


@pytest.mark.parametrize(
    "change", [{"outcome": "model_b"}, {"model_b": "deepseek-coder-fim"}, {"user_id": "other"}]
)
def test_same_pair_id_with_different_vote_is_409(post, change):
    assert post(vote()).status_code == 201
    before = row_counts()
    r = post(vote(**change))
    assert_rejected(r, 409, "pair_id", "different vote", before)


def test_an_id_is_not_trimmed_into_another_vote(post):
    """'p-1\\r' once answered 'duplicate' of 'p-1' (found by tests/reliability/test_vote_properties)."""
    assert post(vote()).status_code == 201
    before = row_counts()
    assert_rejected(post(vote(pair_id="p-1\r")), 400, "pair_id", "whitespace", before)


def test_alias_resolves_to_model(post, models):
    ModelAlias.objects.create(key="gpt-4o", model=models["gpt-4o-2024-08-06"])
    assert post(vote(model_a="gpt-4o")).status_code == 201
    assert Battle.objects.get().model_a == models["gpt-4o-2024-08-06"]


def test_same_model_via_alias_is_rejected(post, models):
    ModelAlias.objects.create(key="codestral-latest", model=models["codestral-2405"])
    before = row_counts()
    r = post(vote(model_a="codestral-latest"))
    assert_rejected(r, 400, "model_b", "different model", before)


def test_malformed_json_is_400(api, models):
    before = row_counts()
    r = api.post(URL, data='{"pair_id": "x", ', content_type="application/json")
    assert_rejected(r, 400, None, "JSON parse error", before)


def test_non_object_body_is_400(post):
    before = row_counts()
    assert_rejected(post([vote()]), 400, "body", "expected a dictionary", before)


BAD = [
    ({"pair_id": None}, "pair_id", "may not be null"),
    ({"model_a": "no-such-model"}, "model_a", "unknown model key 'no-such-model'"),
    ({"model_b": 42}, "model_b", "unknown model key"),
    ({"outcome": "model_c"}, "outcome", "not a valid choice"),
    ({"outcome": 0}, "outcome", "not a valid choice"),
    ({"privacy": "Public"}, "privacy", "not a valid choice"),
    ({"kind": "chat"}, "kind", "not a valid choice"),
    ({"latency_a_ms": -5}, "latency_a_ms", "greater than or equal to 0"),
    ({"latency_b_ms": 1e9}, "latency_b_ms", "less than or equal to 120000"),
    ({"latency_a_ms": "fast"}, "latency_a_ms", "valid number"),
    ({"latency_a_ms": True}, "latency_a_ms", "valid number"),
    ({"prefix_chars": -1}, "prefix_chars", "greater than or equal to 0"),
    ({"prefix_chars": 1.5}, "prefix_chars", "valid integer"),
    ({"pair_id": "x" * 129}, "pair_id", "no more than 128 characters"),
    ({"pair_id": "p-1\r"}, "pair_id", "start or end with whitespace"),
    ({"pair_id": " p-1"}, "pair_id", "start or end with whitespace"),
    ({"pair_id": "p\x001"}, "pair_id", "control characters"),
    ({"user_id": "machine\x07"}, "user_id", "control characters"),
    ({"file_type": "y" * 65}, "file_type", "no more than 64 characters"),
    ({"prefix": "z" * 200_001}, "prefix", "no more than 200000 characters"),
]


@pytest.mark.parametrize(("change", "field", "fragment"), BAD)
def test_bad_field_is_400_naming_the_field(post, change, field, fragment):
    before = row_counts()
    assert_rejected(post(vote(**change)), 400, field, fragment, before)


@pytest.mark.parametrize("missing", ["pair_id", "model_a", "model_b", "outcome", "privacy"])
def test_missing_required_field_is_400(post, missing):
    body = vote()
    del body[missing]
    before = row_counts()
    assert_rejected(post(body), 400, missing, "required", before)


def test_nan_latency_is_rejected(api, models):
    before = row_counts()
    raw = json.dumps(vote()).replace("812.5", "NaN")
    r = api.post(URL, data=raw, content_type="application/json")
    assert r.status_code == 400
    assert row_counts() == before


def test_oversized_body_is_413(api, models, settings):
    settings.ARENA_MAX_BODY_BYTES = 10_000
    before = row_counts()
    r = api.post(URL, data=json.dumps(vote(prefix="a" * 20_000)), content_type="application/json")
    assert r.status_code == 413
    assert "limit" in r.json()["message"]
    assert row_counts() == before


def test_research_vote_keeps_code_in_separate_table(post):
    r = post(
        vote(
            privacy="Research",
            prefix="def f(x):\n",
            suffix="\n",
            completion_a="return x",
            completion_b="pass",
        )
    )
    assert r.status_code == 201
    code = CodeContext.objects.get(battle__pair_id="p-1")
    assert code.prefix == "def f(x):\n" and code.completion_b == "pass"
    assert Battle.objects.get().prefix_chars == len("def f(x):\n")


def test_ties_and_both_bad_are_accepted(post):
    assert post(vote(outcome="tie")).status_code == 201
    assert post(vote(pair_id="p-2", outcome="both_bad", kind="edit")).status_code == 201
    assert sorted(Battle.objects.values_list("outcome", flat=True)) == [
        Outcome.TIE,
        Outcome.BOTH_BAD,
    ]


def test_votes_answer_json_whatever_the_client_accepts(post):
    r = post(vote(), HTTP_ACCEPT="text/html")
    assert r.status_code == 201 and r["Content-Type"] == "application/json"
    assert r.json()["status"] == "created"
    bad = post(vote(pair_id="p-2", outcome="sideways"), HTTP_ACCEPT="text/html")
    assert bad.status_code == 400 and bad["Content-Type"] == "application/json"
    assert "outcome" in bad.json()["message"]


def test_wrong_content_type_is_415(api, models):
    r = api.post(URL, data="pair_id=p-1", content_type="application/x-www-form-urlencoded")
    assert r.status_code == 415
    assert Battle.objects.count() == 0


def test_a_vote_without_a_user_is_stored_without_one(post, models):
    body = vote()
    del body["user_id"]
    assert post(body).status_code == 201
    assert post(vote(pair_id="p-2", user_id="")).status_code == 201
    assert list(Battle.objects.values_list("user_hash", flat=True)) == ["", ""]
