"""Malformed and hostile input answers 400 naming the field, never 500, and stores nothing."""

from __future__ import annotations

import json

import pytest

from tests.ingest.helpers import assert_rejected, row_counts
from tests.ingest.payloads import outcome_payload


def test_deeply_nested_json_is_400(api, models):
    before = row_counts()
    for depth in (40, 5_000, 200_000):
        body = "[" * depth + "]" * depth
        r = api.put("/add_completion_outcome", data=body, content_type="application/json")
        assert_rejected(r, 400, None, "nested", before)


def test_nested_values_inside_a_vote_are_400(keyed_api, models):
    before = row_counts()
    inner: object = "x"
    for _ in range(100):
        inner = {"a": inner}
    body = {"pair_id": "deep", "user_id": inner}
    r = keyed_api.post("/api/v1/battles", data=json.dumps(body), content_type="application/json")
    assert_rejected(r, 400, None, "nested", before)


@pytest.mark.parametrize("route", ["/add_completion_outcome", "/add_edit_outcome"])
def test_lone_surrogate_in_user_id_on_an_anonymous_route_is_400(api, models, route):
    before = row_counts()
    body = outcome_payload(userId="abc\ud800def")
    # json.dumps writes the lone surrogate as the escape \ud800, as a client would send it.
    r = api.put(route, data=json.dumps(body), content_type="application/json")
    assert r.status_code == 400, r.content
    assert "userId" in r.json()["message"]
    assert row_counts() == before


def test_lone_surrogate_in_user_vote_count_is_400(api, db):
    r = api.post(
        "/user_vote_count", data=json.dumps({"userId": "\udfff"}), content_type="application/json"
    )
    assert r.status_code == 400 and "userId" in r.json()["message"]


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/?category=over%00all", "category"),
        ("/api/v1/leaderboard?category=%00", "category"),
        ("/api/v1/slices?dimension=task%00type", "dimension"),
        ("/slices/?dimension=%00", "dimension"),
        ("/models/gpt%00-4o/", "path"),
        ("/api/v1/correlations?source=%00", "source"),
    ],
)
def test_nul_in_query_or_path_is_400_naming_it(client, db, url, field):
    r = client.get(url)
    assert r.status_code == 400, r.content
    body = r.json()
    assert body["error"] == "invalid" and field in body["message"]


def test_invalid_json_is_400(api, models):
    r = api.put("/add_completion_outcome", data=b'{"pairId": "x",', content_type="application/json")
    assert r.status_code == 400 and r.json()["error"] == "parse_error"


def test_a_length_beyond_the_column_is_400_not_500(api, models):
    # Found by schemathesis: prefix_length 2**31 reached the 32-bit column and answered 500.
    before = row_counts()
    body = outcome_payload(pairId="huge-length")
    for item in body["completionItems"]:
        item["prefix"] = ""
        item["prefix_length"] = 2**31
    r = api.put("/add_completion_outcome", data=json.dumps(body), content_type="application/json")
    assert r.status_code == 400, r.content
    assert "prefix_length" in r.json()["message"]
    assert row_counts() == before
