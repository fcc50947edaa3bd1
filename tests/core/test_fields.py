"""A lone surrogate in a code field never refuses a vote: it is stored as U+FFFD and counted.

On every vote route, whatever the privacy; ids and other text fields still refuse one
(tests/reliability/test_hostile_input.py). The extension can cut a surrogate pair in half
when it trims the context, so such a vote must be storable.
"""

from __future__ import annotations

import json

import pytest
from prometheus_client import REGISTRY

from ingest.models import Battle, CodeContext, CompletionLog, SingleOutcome
from tests.ingest.payloads import completion_item, edit_payload, outcome_payload, vote

HALF_PAIR = "x = '\U0001f600'"[:-2] + "\ud83d"  # the emoji's first half, as a cut leaves it


def replaced() -> float:
    return REGISTRY.get_sample_value("arena_surrogates_replaced_total") or 0.0


def send(client, method: str, url: str, body) -> int:
    call = getattr(client, method)
    return call(url, data=json.dumps(body), content_type="application/json").status_code


@pytest.mark.parametrize("privacy", ["Private", "Research"])
def test_extension_votes_with_a_lone_surrogate_are_stored(api, models, privacy):
    before = replaced()
    body = outcome_payload(privacy=privacy, pairId=f"sur-{privacy}")
    body["completionItems"][0]["prefix"] = HALF_PAIR
    body["completionItems"][1]["completion"] = "\udc00 tail"
    assert send(api, "put", "/add_completion_outcome", body) == 200
    battle = Battle.objects.get(pair_id=f"sur-{privacy}")
    if privacy == "Research":
        context = CodeContext.objects.get(battle=battle)
        assert context.prefix.endswith("\ufffd") and "\ud83d" not in context.prefix
    else:
        assert not CodeContext.objects.filter(battle=battle).exists()
    assert replaced() - before == 2

    edit = edit_payload(0) | {"pairId": f"edit-sur-{privacy}", "privacy": privacy}
    edit["responseItems"][0]["codeToEdit"] = "\udfff"
    assert send(api, "put", "/add_edit_outcome", edit) == 200
    item = completion_item(0, "codestral-2405", completion="\ud800", completionId=f"c-{privacy}")
    assert send(api, "put", "/add_completion", item) == 200
    assert send(api, "put", "/add_single_outcome", {**item, "version": "0.2.2"}) == 200
    assert CompletionLog.objects.filter(completion_id=f"c-{privacy}").exists()
    assert SingleOutcome.objects.exists()


def test_native_votes_and_batches_with_a_lone_surrogate_are_stored(keyed_api, models):
    body = vote(pair_id="nat-sur", privacy="Research", prefix="a\ud800b", completion_a="\udbff")
    assert send(keyed_api, "post", "/api/v1/battles", body) == 201
    context = CodeContext.objects.get(battle__pair_id="nat-sur")
    assert context.prefix == "a\ufffdb" and context.completion_a == "\ufffd"
    batch = {"battles": [vote(pair_id=f"bat-sur-{i}", suffix="\udc01") for i in range(3)]}
    assert send(keyed_api, "post", "/api/v1/battles/batch", batch) == 201
    assert Battle.objects.filter(pair_id__startswith="bat-sur-").count() == 3


def test_a_lone_surrogate_in_an_id_is_still_refused(api, models):
    body = outcome_payload(pairId="sur-\ud800-id")
    assert send(api, "put", "/add_completion_outcome", body) == 400
