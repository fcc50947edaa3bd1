"""Completion lengths are stored on every vote route and privacy level; the code only under
Research; the export carries them; the migration back-fills them from stored code."""

from __future__ import annotations

import importlib
import json

import pytest
from django.apps import apps as django_apps
from django.db import connection

from ingest.models import Battle, CodeContext
from ingest.transfer import export_rows
from tests.factories import BattleFactory
from tests.ingest.helpers import all_text_in_database
from tests.ingest.payloads import edit_payload, outcome_payload

PRIVACIES = ["Private", "Debug", "Research"]
# Non-ASCII on purpose: lengths are characters, not bytes.
TOP = "return ä + b  # SECRET_TOP_7781"
BOTTOM = "total = 0\nfor x in (a, b):\n    total += x  # SECRET_BOTTOM_7781\nreturn total"


def _native(privacy: str, pair_id: str = "len-1", **extra) -> dict:
    return {
        "pair_id": pair_id,
        "user_id": "u-1",
        "model_a": "gpt-4o-2024-08-06",
        "model_b": "codestral-2405",
        "outcome": "model_b",
        "privacy": privacy,
        "file_type": "python",
        "prefix": "def add(a, b):\n",
        "completion_a": TOP,
        "completion_b": BOTTOM,
        **extra,
    }


def _assert_lengths(battle: Battle, top: str, bottom: str) -> None:
    assert (battle.completion_a_chars, battle.completion_b_chars) == (len(top), len(bottom))
    assert (battle.completion_a_lines, battle.completion_b_lines) == (
        top.count("\n") + 1,
        bottom.count("\n") + 1,
    )


def _assert_code_kept_only_for_research(privacy: str) -> None:
    if privacy == "Research":
        assert CodeContext.objects.count() == Battle.objects.count()
    else:
        assert CodeContext.objects.count() == 0
        assert "SECRET_TOP_7781" not in all_text_in_database()
        assert "SECRET_BOTTOM_7781" not in all_text_in_database()


@pytest.mark.parametrize("privacy", PRIVACIES)
def test_native_single_vote_stores_lengths(api, models, privacy):
    r = api.post("/api/v1/battles", _native(privacy), format="json")
    assert r.status_code == 201, r.content
    _assert_lengths(Battle.objects.get(), TOP, BOTTOM)
    assert len(TOP) != len(TOP.encode())  # characters, not bytes
    _assert_code_kept_only_for_research(privacy)


@pytest.mark.parametrize("privacy", PRIVACIES)
def test_native_batch_stores_lengths(keyed_api, models, privacy):
    # Private / Debug batches go through COPY, Research ones through bulk_create.
    body = {"battles": [_native(privacy, pair_id=f"b-{i}") for i in range(3)]}
    r = keyed_api.post("/api/v1/battles/batch", body, format="json")
    assert r.status_code == 201, r.content
    assert Battle.objects.count() == 3
    for battle in Battle.objects.all():
        _assert_lengths(battle, TOP, BOTTOM)
    _assert_code_kept_only_for_research(privacy)


def test_native_lengths_without_the_code(api, models):
    body = _native("Private", completion_a="", completion_b="")
    body.update(completion_a_chars=120, completion_b_chars=7)
    assert api.post("/api/v1/battles", body, format="json").status_code == 201
    b = Battle.objects.get()
    assert (b.completion_a_chars, b.completion_b_chars) == (120, 7)
    assert (b.completion_a_lines, b.completion_b_lines) == (None, None)  # unknown without text


def test_native_text_wins_over_a_sent_count(api, models):
    body = _native("Private", completion_a_chars=999)
    assert api.post("/api/v1/battles", body, format="json").status_code == 201
    assert Battle.objects.get().completion_a_chars == len(TOP)


def test_native_without_completions_stores_null(api, models):
    body = _native("Private", completion_a="", completion_b="")
    assert api.post("/api/v1/battles", body, format="json").status_code == 201
    b = Battle.objects.get()
    assert (b.completion_a_chars, b.completion_b_chars, b.completion_a_lines) == (None, None, None)


@pytest.mark.parametrize("value", [-1, "12", 1.5, 10**9])
def test_bad_length_count_is_a_400_naming_the_field(api, models, value):
    r = api.post("/api/v1/battles", _native("Private", completion_b_chars=value), format="json")
    assert r.status_code == 400
    assert "completion_b_chars" in r.json()["fields"]
    assert Battle.objects.count() == 0


@pytest.mark.parametrize("privacy", PRIVACIES)
def test_extension_completion_outcome_stores_lengths(api, models, privacy):
    body = outcome_payload(1, privacy=privacy)
    body["completionItems"][0]["completion"] = TOP
    body["completionItems"][1]["completion"] = BOTTOM
    r = api.put("/add_completion_outcome", data=json.dumps(body), content_type="application/json")
    assert r.status_code == 200, r.content
    _assert_lengths(Battle.objects.get(), TOP, BOTTOM)
    _assert_code_kept_only_for_research(privacy)


def test_extension_items_in_reverse_order_keep_top_and_bottom(api, models):
    body = outcome_payload(0)
    body["completionItems"][0]["completion"] = TOP
    body["completionItems"][1]["completion"] = BOTTOM
    body["completionItems"].reverse()  # pairIndex says which was on top
    r = api.put("/add_completion_outcome", data=json.dumps(body), content_type="application/json")
    assert r.status_code == 200, r.content
    _assert_lengths(Battle.objects.get(), TOP, BOTTOM)


@pytest.mark.parametrize("privacy", PRIVACIES)
def test_extension_edit_outcome_stores_lengths(api, models, privacy):
    body = edit_payload(0)
    body["privacy"] = privacy
    body["responseItems"][0]["response"] = TOP
    body["responseItems"][1]["response"] = BOTTOM
    r = api.put("/add_edit_outcome", data=json.dumps(body), content_type="application/json")
    assert r.status_code == 200, r.content
    _assert_lengths(Battle.objects.get(), TOP, BOTTOM)
    _assert_code_kept_only_for_research(privacy)


def test_export_carries_lengths_and_reimport_keeps_them(api, models):
    assert api.post("/api/v1/battles", _native("Private"), format="json").status_code == 201
    (row,) = list(export_rows())
    assert (row["completion_a_chars"], row["completion_b_chars"]) == (len(TOP), len(BOTTOM))
    assert "completion_a" not in row  # the export without code has no text either


def test_migration_backfills_lengths_from_stored_code(db, models):
    research = BattleFactory(
        model_a=models["gpt-4o-2024-08-06"], model_b=models["codestral-2405"], privacy="Research"
    )
    CodeContext.objects.create(battle=research, completion_a=TOP, completion_b=BOTTOM)
    half = BattleFactory(
        model_a=models["gpt-4o-2024-08-06"], model_b=models["codestral-2405"], privacy="Research"
    )
    CodeContext.objects.create(battle=half, completion_a=TOP, completion_b="")
    private = BattleFactory(
        model_a=models["gpt-4o-2024-08-06"], model_b=models["codestral-2405"], privacy="Private"
    )
    already = BattleFactory(
        model_a=models["gpt-4o-2024-08-06"],
        model_b=models["codestral-2405"],
        privacy="Research",
        completion_a_chars=5,
    )
    CodeContext.objects.create(battle=already, completion_a=TOP, completion_b=BOTTOM)
    migration = importlib.import_module("ingest.migrations.0004_completion_lengths")
    with connection.schema_editor() as editor:
        migration.backfill_lengths(django_apps, editor)
    research.refresh_from_db()
    _assert_lengths(research, TOP, BOTTOM)
    half.refresh_from_db()
    assert (half.completion_a_chars, half.completion_b_chars) == (len(TOP), None)
    private.refresh_from_db()  # no stored code: stays unknown
    assert (private.completion_a_chars, private.completion_b_lines) == (None, None)
    already.refresh_from_db()  # a length stored at ingest is not overwritten
    assert already.completion_a_chars == 5 and already.completion_b_chars == len(BOTTOM)
