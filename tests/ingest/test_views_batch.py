"""Batch ingest: API key required, all-or-nothing, per-item errors, replays skipped."""

from __future__ import annotations

import json

import pytest

from ingest.models import Battle
from tests.ingest.helpers import assert_rejected, row_counts
from tests.ingest.payloads import batch, vote

URL = "/api/v1/battles/batch"


@pytest.fixture
def post_batch(keyed_api, models):
    def _post(body, client=None):
        return (client or keyed_api).post(
            URL, data=json.dumps(body), content_type="application/json"
        )

    return _post


def test_batch_needs_an_api_key(api, models):
    before = row_counts()
    r = api.post(URL, data=json.dumps(batch(2)), content_type="application/json")
    assert r.status_code in (401, 403)
    assert "API key" in r.json()["message"]
    assert row_counts() == before


def test_batch_stores_all_and_skips_replays(post_batch):
    r = post_batch(batch(50))
    assert r.status_code == 201, r.content
    assert r.json() == {"created": 50, "duplicates": 0}
    assert Battle.objects.count() == 50
    assert Battle.objects.exclude(client=None).count() == 50
    r = post_batch(batch(60))
    assert r.json() == {"created": 10, "duplicates": 50}
    assert Battle.objects.count() == 60


def test_one_bad_item_rejects_the_whole_batch(post_batch):
    body = batch(5)
    body["battles"][3]["model_a"] = "not-a-model"
    body["battles"][1]["latency_b_ms"] = -3
    before = row_counts()
    r = post_batch(body)
    assert_rejected(r, 400, "battles.3.model_a", "unknown model key", before)
    assert "battles.1.latency_b_ms" in r.json()["fields"]
    assert "Nothing was stored" in r.json()["message"]


def test_conflict_with_stored_vote_rejects_batch(post_batch):
    assert post_batch(batch(2)).status_code == 201
    body = batch(4)
    body["battles"][1]["outcome"] = "model_b"
    before = row_counts()
    assert_rejected(post_batch(body), 409, "battles.1.pair_id", "different vote", before)


def test_conflict_inside_batch(post_batch):
    body = batch(3)
    body["battles"][2] = vote(pair_id="b-0", outcome="tie")
    before = row_counts()
    assert_rejected(
        post_batch(body), 400, "battles.2.pair_id", "repeats the pair id of item 0", before
    )


def test_batch_over_the_limit(post_batch, settings):
    settings.ARENA_MAX_BATCH = 10
    before = row_counts()
    assert_rejected(post_batch(batch(11)), 400, "battles", "at most 10 battles", before)


@pytest.mark.parametrize("body", [{}, {"battles": []}, {"battles": "x"}, []])
def test_batch_shape_errors(post_batch, body):
    before = row_counts()
    assert_rejected(post_batch(body), 400, "battles", "non-empty list", before)


def test_batch_research_code_kept_private_dropped(post_batch):
    from ingest.models import CodeContext

    body = {
        "battles": [
            vote(pair_id="r", privacy="Research", prefix="x = 1\n"),
            vote(pair_id="q", prefix="y = 2\n"),
        ]
    }
    assert post_batch(body).status_code == 201
    assert list(CodeContext.objects.values_list("battle__pair_id", "prefix")) == [("r", "x = 1\n")]
