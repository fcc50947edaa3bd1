"""Code from users who did not choose Research is never written: not to tables, not to logs."""

from __future__ import annotations

import json
import logging

import pytest

from ingest.models import Battle, CodeContext, CompletionCode
from tests.ingest.helpers import all_text_in_database
from tests.ingest.payloads import completion_item, edit_payload, outcome_payload

SECRET = "TOP_SECRET_TOKEN_4242"


def secret_payload(privacy: str) -> dict:
    body = outcome_payload(0, privacy=privacy, repoUrl=f"https://git.example.com/{SECRET}")
    for item in body["completionItems"]:
        item["prefix"] = f"api_key = '{SECRET}'\n"
        item["suffix"] = f"# {SECRET}\n"
        item["prompt"] = f"<CODE>{SECRET}"
        item["completion"] = f"print('{SECRET}')"
        item["raw_completion"] = SECRET
        item["full_prefix"] = SECRET
    return body


@pytest.mark.parametrize("privacy", ["Private", "Debug"])
def test_private_and_debug_votes_leave_no_code_anywhere(api, models, privacy, caplog):
    caplog.set_level(logging.DEBUG)
    r = api.put(
        "/add_completion_outcome",
        data=json.dumps(secret_payload(privacy)),
        content_type="application/json",
    )
    assert r.status_code == 200, r.content
    assert Battle.objects.count() == 1
    assert CodeContext.objects.count() == 0
    assert SECRET not in all_text_in_database()
    assert SECRET not in caplog.text


@pytest.mark.parametrize("privacy", ["Private", "Debug"])
def test_private_completion_log_and_edit_keep_no_code(api, models, privacy, caplog):
    caplog.set_level(logging.DEBUG)
    item = completion_item(
        0, "gpt-4o-2024-08-06", privacy=privacy, prompt=SECRET, completion=SECRET, prefix=SECRET
    )
    assert (
        api.put(
            "/add_completion", data=json.dumps(item), content_type="application/json"
        ).status_code
        == 200
    )
    edit = edit_payload(0)
    edit["privacy"] = privacy
    for it in edit["responseItems"]:
        it.update(codeToEdit=SECRET, userInput=SECRET, response=SECRET, prompt=SECRET)
    assert (
        api.put(
            "/add_edit_outcome", data=json.dumps(edit), content_type="application/json"
        ).status_code
        == 200
    )
    assert CompletionCode.objects.count() == 0 and CodeContext.objects.count() == 0
    assert SECRET not in all_text_in_database()
    assert SECRET not in caplog.text


def test_private_vote_is_still_labelled(api, models):
    body = secret_payload("Private")
    for item in body["completionItems"]:
        item["prefix"] = (
            "import numpy as np\nimport pandas as pd\n\ndf = pd.read_csv('x.csv')\n" * 3
        )
    assert (
        api.put(
            "/add_completion_outcome", data=json.dumps(body), content_type="application/json"
        ).status_code
        == 200
    )
    b = Battle.objects.get()
    assert b.language == "python"
    assert b.context_bucket != "unknown" and b.context_tokens > 0
    assert b.labeler_version


def test_research_vote_keeps_its_code(api, models):
    r = api.put(
        "/add_completion_outcome",
        data=json.dumps(secret_payload("Research")),
        content_type="application/json",
    )
    assert r.status_code == 200
    code = CodeContext.objects.get()
    assert SECRET in code.prefix and SECRET in code.completion_a
    assert code.repo_url.endswith(SECRET)


def test_rejected_private_vote_does_not_echo_code(api, models):
    body = secret_payload("Private")
    body["completionItems"][0]["model"] = "unknown-model"
    r = api.put("/add_completion_outcome", data=json.dumps(body), content_type="application/json")
    assert r.status_code == 400
    assert SECRET not in r.content.decode()
