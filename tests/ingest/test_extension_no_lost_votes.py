"""What the extension does every day must never cost a vote: throttle scopes, `//route`,
NUL characters, the original server's item format, merged completion logs, the vote count."""

from __future__ import annotations

import json

import pytest

from core.metrics import NUL_STRIPPED
from ingest.completions import record_completions
from ingest.models import Battle, CodeContext, CompletionCode, CompletionLog
from ingest.pseudonyms import pseudonymise_user
from ingest.votes import CompletionIn
from tests.ingest.payloads import completion_item, outcome_payload


def put(api, path: str, body: dict):
    return api.put(path, data=json.dumps(body), content_type="application/json")


def shown(i: int, model: str = "gpt-4o-2024-08-06", **extra) -> dict:
    return completion_item(0, model, completionId=f"shown-{i}", pairCompletionId=f"o-{i}", **extra)


def test_a_burst_of_shown_completions_never_throttles_the_votes(api, models, settings):
    # Today's defaults: 200 shown completions and 60 votes from one user in one minute.
    settings.ARENA_THROTTLE_RATES = {**settings.ARENA_THROTTLE_RATES}
    codes = []
    for i in range(200):
        codes.append(put(api, "/add_completion", shown(i)).status_code)
        if i % 10 == 9:
            vote = outcome_payload(pairId=f"burst-{i}", accepted=i % 2)
            assert put(api, "/add_completion_outcome", vote).status_code == 200
    for i in range(40):
        assert (
            put(api, "/add_completion_outcome", outcome_payload(pairId=f"late-{i}")).status_code
            == 200
        )
    assert codes.count(200) == 200
    assert Battle.objects.count() == 60


def test_completion_logs_have_their_own_limit(api, models, settings):
    settings.ARENA_THROTTLE_RATES = {
        **settings.ARENA_THROTTLE_RATES,
        "completion_user": "3/min",
        "vote_user": "2/min",
    }
    codes = [put(api, "/add_completion", shown(i)).status_code for i in range(5)]
    assert codes == [200, 200, 200, 429, 429]
    # The votes' allowance is untouched by the logs.
    votes = [
        put(api, "/add_completion_outcome", outcome_payload(pairId=f"v-{i}")).status_code
        for i in range(3)
    ]
    assert votes == [200, 200, 429]


@pytest.mark.parametrize("path", ["//add_completion_outcome", "///add_completion_outcome"])
def test_a_trailing_slash_in_the_server_url_still_reaches_the_route(api, models, path):
    # PATH_INFO set directly: the test client would read "//x" as a host name.
    body = json.dumps(outcome_payload())
    r = api.put("/unused", data=body, content_type="application/json", PATH_INFO=path)
    assert r.status_code == 200 and r.json()["status"] == "success"
    assert Battle.objects.count() == 1
    r = api.get("/unused", PATH_INFO="//list_models")
    assert r.status_code == 200 and "models" in r.json()


def test_nul_characters_are_stripped_not_refused(api, models):
    before = NUL_STRIPPED._value.get()
    body = outcome_payload(privacy="Research")
    body["completionItems"][0]["prefix"] = "def f():\x00\n"
    body["completionItems"][0]["completion"] = "    return\x00 1"
    assert put(api, "/add_completion_outcome", body).status_code == 200
    code = CodeContext.objects.get()
    assert code.prefix == "def f():\n" and code.completion_a == "    return 1"
    assert NUL_STRIPPED._value.get() >= before + 2


def test_the_original_servers_chat_prompt_list_is_accepted(api, models):
    item = shown(1, privacy="Research")
    item["prompt"] = [
        {"role": "system", "content": "You complete code."},
        {"role": "user", "content": "<CODE>def add(a, b):"},
    ]
    assert put(api, "/add_completion", item).status_code == 200
    prompt = CompletionCode.objects.get(completion_id="shown-1").prompt
    assert "You complete code." in prompt and "<CODE>def add(a, b):" in prompt
    bad = shown(2)
    bad["prompt"] = [{"role": "user", "content": 3}]
    r = put(api, "/add_completion", bad)
    assert r.status_code == 400 and "prompt" in r.json()["fields"]


def _served(completion_id: str, model_id: int, latency_ms: float) -> CompletionIn:
    return CompletionIn(
        completion_id=completion_id,
        model_id=model_id,
        user_id="vscode-machine-id",
        privacy="Private",
        pair_id="pair-x",
        pair_index=0,
        latency_ms=latency_ms,
        served_by_us=True,
    )


@pytest.mark.parametrize("server_first", [True, False])
def test_server_and_extension_logs_merge_into_one_row(api, models, server_first):
    model = models["gpt-4o-2024-08-06"]
    client_log = shown(7, latency=9.99, version="1.2.7", fileType="typescript")
    if server_first:
        record_completions(completions=[_served("shown-7", model.pk, 812.0)])
        assert put(api, "/add_completion", client_log).status_code == 200
    else:
        assert put(api, "/add_completion", client_log).status_code == 200
        record_completions(completions=[_served("shown-7", model.pk, 812.0)])
    row = CompletionLog.objects.get()
    assert row.latency_ms == 812.0  # the server's measurement, not the client's 9.99 s
    assert row.served_by_us and row.pair_id == "pair-x"
    assert (row.client_version, row.file_type) == ("1.2.7", "typescript")


def test_vote_count_counts_completion_votes_that_count(api, models):
    for i in range(3):
        assert (
            put(api, "/add_completion_outcome", outcome_payload(pairId=f"c-{i}")).status_code == 200
        )
    Battle.objects.filter(pair_id="c-2").update(excluded=True)
    Battle.objects.create(
        **{
            **Battle.objects.values().get(pair_id="c-0"),
            "id": None,
            "pair_id": "edit-0",
            "kind": "edit",
        }
    )
    r = api.post(
        "/user_vote_count",
        data=json.dumps({"userId": "vscode-machine-id"}),
        content_type="application/json",
    )
    assert r.status_code == 200 and r.json() == {"voteCount": 2}
    assert Battle.objects.filter(user_hash=pseudonymise_user("vscode-machine-id")).count() == 4
