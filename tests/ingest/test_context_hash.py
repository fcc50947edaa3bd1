"""Battle.context_hash: a keyed fingerprint of the context, stored for every privacy level,
equal for identical contexts and never the code itself."""

from __future__ import annotations

import json

import pytest

from ingest.models import Battle
from tests.ingest.helpers import all_text_in_database
from tests.ingest.payloads import outcome_payload

SECRET = "CONTEXT_SECRET_9191"


def _vote(api, pair_id: str, prefix: str, privacy: str) -> None:
    body = outcome_payload(0, privacy=privacy, pairId=pair_id)
    for item in body["completionItems"]:
        item["prefix"], item["suffix"] = prefix, "\n# end\n"
    r = api.put("/add_completion_outcome", data=json.dumps(body), content_type="application/json")
    assert r.status_code == 200, r.content


@pytest.mark.parametrize("privacy", ["Private", "Research"])
def test_identical_contexts_share_a_fingerprint_and_no_code_is_stored(api, models, privacy):
    _vote(api, "ctx-1", f"x = '{SECRET}'\n", privacy)
    _vote(api, "ctx-2", f"x = '{SECRET}'\n", privacy)
    _vote(api, "ctx-3", "y = 2\n", privacy)
    hashes = dict(Battle.objects.values_list("pair_id", "context_hash"))
    assert len(hashes["ctx-1"]) == 16 and int(hashes["ctx-1"], 16) >= 0
    assert hashes["ctx-1"] == hashes["ctx-2"] != hashes["ctx-3"]
    if privacy == "Private":
        assert SECRET not in all_text_in_database()


def test_a_vote_without_context_has_no_fingerprint(api, models):
    _vote(api, "ctx-empty", "", "Private")
    body = outcome_payload(0, privacy="Private", pairId="ctx-none")
    for item in body["completionItems"]:
        item["prefix"], item["suffix"] = "", ""
    api.put("/add_completion_outcome", data=json.dumps(body), content_type="application/json")
    assert Battle.objects.get(pair_id="ctx-none").context_hash == ""
