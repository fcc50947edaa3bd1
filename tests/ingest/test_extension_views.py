"""The public Copilot Arena extension's routes, with payloads shaped exactly as it sends them."""

from __future__ import annotations

import copy
import json

import pytest

from ingest.models import Battle, BattleKind, CompletionLog, Outcome, SingleOutcome
from tests.ingest.helpers import assert_rejected, row_counts
from tests.ingest.payloads import completion_item, edit_payload, outcome_payload


@pytest.fixture
def put(api, models):
    def _put(url, body):
        return api.put(url, data=json.dumps(body), content_type="application/json")

    return _put


@pytest.mark.parametrize(("accepted", "outcome"), [(0, Outcome.A), (1, Outcome.B)])
def test_completion_outcome_is_a_battle_top_is_model_a(put, accepted, outcome):
    r = put("/add_completion_outcome", outcome_payload(accepted))
    assert r.status_code == 200, r.content
    assert r.json()["status"] == "success"
    b = Battle.objects.get(pair_id="pair-ext-1")
    assert (b.model_a.key, b.model_b.key) == ("gpt-4o-2024-08-06", "codestral-2405")
    assert b.outcome == outcome and b.kind == BattleKind.COMPLETION
    assert b.latency_a_ms == pytest.approx(840.0) and b.latency_b_ms == pytest.approx(1310.0)
    assert b.source == "extension" and b.client_version == "0.2.2"
    assert b.prefix_chars == len("def add(a, b):\n")


def test_items_are_ordered_by_pair_index(put):
    body = outcome_payload(0)
    body["completionItems"].reverse()
    assert put("/add_completion_outcome", body).status_code == 200
    b = Battle.objects.get()
    assert b.model_a.key == "gpt-4o-2024-08-06"  # pairIndex 0, whatever the list order


def test_completion_outcome_replay_and_conflict(put):
    assert put("/add_completion_outcome", outcome_payload(0)).status_code == 200
    before = row_counts()
    assert put("/add_completion_outcome", outcome_payload(0)).status_code == 200
    assert row_counts() == before
    assert_rejected(
        put("/add_completion_outcome", outcome_payload(1)), 409, "pair_id", "different vote", before
    )


@pytest.mark.parametrize(
    ("mutate", "field", "fragment"),
    [
        (lambda b: b.update(acceptedIndex=2), "acceptedIndex", "less than or equal to 1"),
        (lambda b: b.update(acceptedIndex=-2), "acceptedIndex", "greater than or equal to 0"),
        (lambda b: b.update(acceptedIndex="0"), "acceptedIndex", "valid integer"),
        (lambda b: b["completionItems"].pop(), "completionItems", "exactly 2 items"),
        (
            lambda b: b["completionItems"][1].update(model="gpt-5-nope"),
            "completionItems.1.model",
            "unknown model key",
        ),
        (
            lambda b: b["completionItems"][1].update(model="gpt-4o-2024-08-06"),
            "completionItems",
            "different models",
        ),
        (
            lambda b: b["completionItems"][0].update(latency=-1),
            "completionItems.0.latency",
            "greater than or equal to 0",
        ),
        (
            lambda b: b["completionItems"][0].update(latency=10_000),
            "completionItems.0.latency",
            "less than or equal to 120",
        ),
        (
            lambda b: b["completionItems"][0].update(pairIndex=1),
            "completionItems",
            "pairIndex must be 0",
        ),
        (
            lambda b: b["completionItems"][0].pop("completionId"),
            "completionItems.0.completionId",
            "required",
        ),
        (lambda b: b.update(privacy="Everyone"), "privacy", "not a valid choice"),
        (lambda b: b.pop("pairId"), "pairId", "required"),
        # Trimmed, "p1\r" would be answered as a replay of "p1", which it is not.
        (lambda b: b.update(pairId=b["pairId"] + "\r"), "pairId", "start or end with whitespace"),
        (lambda b: b.update(userId="u\x1b[2J"), "userId", "control characters"),
        (
            lambda b: b["completionItems"][1].update(completionId=" c-2"),
            "completionItems.1.completionId",
            "start or end with whitespace",
        ),
        (lambda b: b.pop("userId"), "userId", "required"),
        (lambda b: b.pop("version"), "version", "required"),
    ],
)
def test_completion_outcome_bad_input(put, mutate, field, fragment):
    body = copy.deepcopy(outcome_payload(0))
    mutate(body)
    before = row_counts()
    assert_rejected(put("/add_completion_outcome", body), 400, field, fragment, before)


@pytest.mark.parametrize(
    ("accepted", "outcome"), [(0, Outcome.A), (1, Outcome.B), (-2, Outcome.BOTH_BAD)]
)
def test_edit_outcome(put, accepted, outcome):
    assert put("/add_edit_outcome", edit_payload(accepted)).status_code == 200
    b = Battle.objects.get(pair_id="edit-1")
    assert b.kind == BattleKind.EDIT and b.outcome == outcome
    assert b.model_b.key == "deepseek-coder-fim"


def test_edit_outcome_rejects_minus_one(put):
    before = row_counts()
    assert_rejected(
        put("/add_edit_outcome", edit_payload(-1)), 400, "acceptedIndex", "-2 (both bad)", before
    )


def test_add_completion_logs_latency(put):
    item = completion_item(0, "gpt-4o-2024-08-06")
    assert put("/add_completion", item).status_code == 200
    log = CompletionLog.objects.get(completion_id="c-0")
    assert log.latency_ms == pytest.approx(840.0) and log.pair_index == 0
    before = row_counts()
    assert put("/add_completion", item).status_code == 200  # replay
    assert row_counts() == before


def test_add_completion_unknown_model(put):
    before = row_counts()
    r = put("/add_completion", completion_item(0, "mystery-model"))
    assert_rejected(r, 400, "model", "unknown model key", before)


def test_single_outcome_without_privacy_is_private(put):
    item = completion_item(0, "codestral-2405")
    item.pop("privacy")
    assert put("/add_single_outcome", {**item, "version": "0.2.2"}).status_code == 200
    s = SingleOutcome.objects.get()
    assert s.privacy == "Private"
    assert s.model.key == "codestral-2405"


def test_list_models_all_lists_public_and_private(api, models):
    from catalogue.models import Visibility

    hidden = models["gemini-1.5-flash-002"]
    hidden.visibility = Visibility.HIDDEN
    hidden.save()
    # ?all=1: every key that collects votes; without it only what this server can serve
    # (tests/serving/test_list_models.py), here nothing.
    assert api.get("/list_models").json() == {"models": []}
    r = api.get("/list_models?all=1")
    assert r.status_code == 200
    assert r.json()["models"] == sorted(
        ["gpt-4o-2024-08-06", "codestral-2405", "deepseek-coder-fim"]
    )


def test_user_vote_count(api, put):
    assert put("/add_completion_outcome", outcome_payload(0)).status_code == 200
    r = api.post("/user_vote_count", data={"userId": "vscode-machine-id"}, format="json")
    assert r.json() == {"voteCount": 1}
    r = api.post("/user_vote_count", data={"userId": "someone-else"}, format="json")
    assert r.json() == {"voteCount": 0}
    r = api.post("/user_vote_count", data={}, format="json")
    assert r.status_code == 400 and "userId" in r.json()["message"]
