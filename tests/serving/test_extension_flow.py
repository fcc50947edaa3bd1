"""The public extension's whole flow against this server with stub providers: create a pair,
show it (``/add_completion``), vote (``/add_completion_outcome``) -- and the same for edits.

Bodies are built the way vscode/src/api.ts builds them: the items ``/create_pair`` returned
are spread and extended with ``pairIndex``, ``version``, ``privacy``, ``fileType`` (and
``username``), the pair's ``userId`` is taken from item 0, ``repoUrl`` is left out unless
the privacy setting allows it.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from ingest.models import Battle, BattleKind, CodeContext, CompletionLog, Outcome
from serving.models import ModelProvider
from tests.serving.conftest import SECRET_ENV, add_provider
from tests.serving.test_create_pair import PREFIX, SUFFIX, pair_request

VERSION = "0.2.2"


def shown_completion(item: dict, pair_index: int, other: dict, privacy: str) -> dict:
    # uploadArenaCompletion(item, pairIndex, pairCompletionId, privacy, fileType)
    return {
        **item,
        "pairIndex": pair_index,
        "version": VERSION,
        "pairCompletionId": other["completionId"],
        "privacy": privacy,
        "fileType": "python",
    }


def completion_outcome(pair: dict, accepted: int, privacy: str, repo_url: str | None) -> dict:
    # uploadArenaPair(completionPair, acceptedIndex, privacy, fileType, username)
    items = [
        {
            **item,
            "pairIndex": i,
            "version": VERSION,
            "privacy": privacy,
            "fileType": "python",
            "username": "",
        }
        for i, item in enumerate(pair["completionItems"])
    ]
    body = {
        "pairId": pair["pairId"],
        "userId": pair["completionItems"][0]["userId"],
        "completionItems": items,
        "acceptedIndex": accepted,
        "version": VERSION,
        "privacy": privacy,
        "fileType": "python",
    }
    if repo_url is not None:  # JSON.stringify drops undefined
        body["repoUrl"] = repo_url
    return body


def edit_outcome(pair: dict, accepted: int, privacy: str) -> dict:
    # uploadEditPair(editPair, acceptedIndex, privacy, fileType, username)
    items = [
        {
            **item,
            "pairIndex": i,
            "version": VERSION,
            "privacy": privacy,
            "fileType": "python",
            "username": None,
        }
        for i, item in enumerate(pair["responseItems"])
    ]
    items = [{k: v for k, v in item.items() if v is not None} for item in items]
    return {
        "pairId": pair["pairId"],
        "userId": pair["responseItems"][0]["userId"],
        "responseItems": items,
        "acceptedIndex": accepted,
        "version": VERSION,
        "privacy": privacy,
        "fileType": "python",
    }


def edit_request(**extra) -> dict:
    # promptToDiff.ts EditPairRequest
    body = {
        "pairId": "edit-pair-1",
        "userId": "vscode-machine-id",
        "prefix": "def total(xs):\n",
        "suffix": "\n\nprint(total([1, 2]))\n",
        "maxLines": 50,
        "privacy": "Private",
        "language": "python",
        "codeToEdit": "    t = 0\n    for x in xs:\n        t += x\n    return t",
        "userInput": "use the builtin",
    }
    body.update(extra)
    return body


@pytest.fixture
def chat_pair(served, stub):
    """A second chat model, so edits (chat models only) can be served."""
    add_provider("claude-3-5-sonnet-20240620", "openai_chat", "stub-claude", stub)
    return served


@pytest.mark.parametrize(("accepted", "privacy"), [(0, "Private"), (1, "Research")])
def test_completion_flow_create_show_vote(api, served, stub, accepted, privacy):
    pair = api.post("/create_pair", pair_request(privacy=privacy), format="json").json()
    top, bottom = pair["completionItems"]
    # Shown: the extension uploads both completions.
    for i, (item, other) in enumerate([(top, bottom), (bottom, top)]):
        response = api.put(
            "/add_completion", shown_completion(item, i, other, privacy), format="json"
        )
        assert response.status_code == 200, response.content
    # Voted.
    repo = "https://github.com/example/repo" if privacy == "Research" else None
    response = api.put(
        "/add_completion_outcome", completion_outcome(pair, accepted, privacy, repo), format="json"
    )
    assert response.status_code == 200, response.content
    battle = Battle.objects.get(pair_id=pair["pairId"])
    # Serving is on and this is the pair it served: the vote is bound, so it counts.
    assert (battle.hold, battle.excluded) == ("", False)
    assert (battle.model_a.key, battle.model_b.key) == (top["model"], bottom["model"])
    assert battle.outcome == (Outcome.A if accepted == 0 else Outcome.B)
    assert battle.kind == BattleKind.COMPLETION
    assert battle.language == "python"
    assert battle.prefix_chars == len(PREFIX)
    assert battle.latency_a_ms == pytest.approx(top["latency"] * 1000)
    assert battle.latency_b_ms == pytest.approx(bottom["latency"] * 1000)
    assert battle.client_version == VERSION
    # The served logs were not duplicated by the "shown" uploads.
    assert CompletionLog.objects.filter(pair_id=pair["pairId"]).count() == 2
    assert CompletionLog.objects.filter(served_by_us=True, succeeded=True).count() == 2
    if privacy == "Research":
        code = CodeContext.objects.get(battle=battle)
        assert (code.prefix, code.suffix) == (PREFIX, SUFFIX)
        assert (code.completion_a, code.completion_b) == (top["completion"], bottom["completion"])
        assert code.repo_url == repo
    else:
        assert not CodeContext.objects.exists()


@pytest.mark.parametrize(
    ("accepted", "outcome"), [(0, Outcome.A), (1, Outcome.B), (-2, Outcome.BOTH_BAD)]
)
def test_edit_flow_create_vote(api, chat_pair, stub, accepted, outcome):
    stub.behave("stub-gpt", middle="    return sum(xs)")
    stub.behave("stub-claude", middle="    return sum(xs)  # builtin")
    response = api.post("/create_edit_pair", edit_request(), format="json")
    assert response.status_code == 200, response.content
    pair = response.json()
    top, bottom = pair["responseItems"]
    # Only chat models edit.
    assert {top["model"], bottom["model"]} == {"gpt-4o-2024-08-06", "claude-3-5-sonnet-20240620"}
    expected = {
        "gpt-4o-2024-08-06": "    return sum(xs)",
        "claude-3-5-sonnet-20240620": "    return sum(xs)  # builtin",
    }
    for i, item in enumerate((top, bottom)):
        assert item["response"] == expected[item["model"]]
        assert item["pairIndex"] == i
        for name in (
            "responseId",
            "userId",
            "timestamp",
            "prompt",
            "language",
            "codeToEdit",
            "userInput",
        ):
            assert name in item
    assert top["pairResponseId"] == bottom["responseId"]
    sent = stub.requests[0].body["messages"][-1]["content"]
    assert "<SELECTION>    t = 0\n" in sent and "use the builtin" in sent
    response = api.put("/add_edit_outcome", edit_outcome(pair, accepted, "Private"), format="json")
    assert response.status_code == 200, response.content
    battle = Battle.objects.get(pair_id="edit-pair-1")
    assert (battle.hold, battle.excluded) == ("", False)  # bound to the served edit pair
    assert battle.kind == BattleKind.EDIT
    assert (battle.model_a.key, battle.model_b.key) == (top["model"], bottom["model"])
    assert battle.outcome == outcome
    logs = CompletionLog.objects.filter(pair_id="edit-pair-1")
    assert {c.completion_id for c in logs} == {top["responseId"], bottom["responseId"]}
    assert all(c.file_type == "python" for c in logs)


def test_edits_need_two_chat_models(api, served, stub):
    response = api.post("/create_edit_pair", edit_request(), format="json")
    assert response.status_code == 503
    assert "chat models" in response.json()["message"]


def test_edit_validation(api, chat_pair, stub):
    response = api.post("/create_edit_pair", edit_request(userInput=""), format="json")
    assert response.status_code == 400 and "userInput" in response.json()["fields"]
    huge = "x = 1\n" * 7000  # ~42 KB: over 8,192 estimated tokens
    response = api.post("/create_edit_pair", edit_request(codeToEdit=huge), format="json")
    assert response.status_code == 400 and "codeToEdit" in response.json()["fields"]
    assert "select less code" in response.json()["message"]
    assert stub.requests == []


@pytest.mark.django_db(transaction=True)
def test_extension_flow_over_real_http(live_server, stub, secret_env, settings):
    """The same flow over a real socket, with the headers the extension's fetch() sends."""
    for key, kind, remote in [
        ("gpt-4o-2024-08-06", "openai_chat", "stub-gpt"),
        ("codestral-2405", "mistral_fim", "stub-codestral"),
    ]:
        add_provider(key, kind, remote, stub)
    assert ModelProvider.objects.count() == 2

    def call(method: str, path: str, body: dict) -> tuple[int, dict]:
        request = urllib.request.Request(
            live_server.url + path,
            data=json.dumps(body).encode(),
            method=method,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, json.loads(response.read())

    status, pair = call("POST", "/create_pair", pair_request())
    assert status == 200
    status, answer = call(
        "PUT", "/add_completion_outcome", completion_outcome(pair, 1, "Private", None)
    )
    assert (status, answer["status"]) == (200, "success")
    battle = Battle.objects.get(pair_id=pair["pairId"])
    assert battle.model_b.key == pair["completionItems"][1]["model"]
    assert battle.outcome == Outcome.B
    assert stub.requests[0].headers["authorization"].endswith(secret_env[-8:])
    assert SECRET_ENV not in json.dumps(pair)
