"""Sentry events carry no code outside Research privacy and no user ids (arena_site/sentry.py)."""

from __future__ import annotations

import json
import uuid

import pytest
from rest_framework import serializers

from arena_site.sentry import CODE_FIELDS, SCRUBBED, _norm, scrub_event

CODE = "def secret_algorithm():\n    return 42\n"


def outcome(privacy: str) -> dict:
    # The extension's vote, as a request body.
    return {
        "pairId": "p-1",
        "userId": "machine-1",
        "acceptedIndex": 0,
        "privacy": privacy,
        "fileType": "python",
        "completionItems": [
            {"completionId": "c-1", "model": "m-a", "prompt": CODE, "completion": CODE},
            {"completionId": "c-2", "model": "m-b", "prompt": CODE, "completion": CODE},
        ],
    }


def event_with_body(data) -> dict:
    return {"request": {"url": "https://arena.test/add_completion_outcome", "data": data}}


def test_private_code_is_scrubbed_everywhere_in_the_body():
    body = scrub_event(event_with_body(outcome("Private")))["request"]["data"]
    assert CODE not in json.dumps(body)
    assert body["completionItems"][0]["completion"] == SCRUBBED
    assert body["completionItems"][1]["model"] == "m-b"  # the rest is kept for debugging
    assert body["fileType"] == "python" and body["pairId"] == "p-1"


def test_research_code_is_kept_but_user_ids_never_are():
    body = scrub_event(event_with_body(outcome("Research")))["request"]["data"]
    assert body["completionItems"][0]["prompt"] == CODE
    assert body["userId"] == SCRUBBED


def test_a_body_without_privacy_counts_as_private():
    body = scrub_event(event_with_body({"prefix": CODE, "code_to_edit": CODE, "n": 1}))
    assert body["request"]["data"] == {"prefix": SCRUBBED, "code_to_edit": SCRUBBED, "n": 1}


def test_each_item_of_a_batch_goes_by_its_own_privacy():
    batch = {
        "battles": [
            {"privacy": "Research", "prefix": CODE, "user_id": "u"},
            {"privacy": "Debug", "prefix": CODE, "user_id": "u"},
        ]
    }
    items = scrub_event(event_with_body(batch))["request"]["data"]["battles"]
    assert items[0]["prefix"] == CODE and items[1]["prefix"] == SCRUBBED
    assert items[0]["user_id"] == items[1]["user_id"] == SCRUBBED


def test_a_raw_json_body_is_parsed_and_a_non_json_body_dropped():
    parsed = scrub_event(event_with_body(json.dumps(outcome("Private"))))["request"]["data"]
    assert parsed["completionItems"][0]["prompt"] == SCRUBBED
    assert scrub_event(event_with_body("prefix=" + CODE))["request"]["data"] == SCRUBBED


def test_frame_variables_are_dropped_and_breadcrumbs_and_extra_scrubbed():
    event = {
        "exception": {
            "values": [{"stacktrace": {"frames": [{"function": "f", "vars": {"text": CODE}}]}}]
        },
        "breadcrumbs": {"values": [{"category": "x", "data": {"suffix": CODE}}]},
        "extra": {"vote": {"completion_a": CODE, "privacy": "Private"}},
    }
    out = json.dumps(scrub_event(event))
    assert CODE not in out and "vars" not in out


def _code_fields(serializer_class) -> set[str]:
    # code_field(): trim_whitespace off and the code length limit (ingest/fields.py).
    from django.conf import settings

    names = set()
    for name, f in serializer_class().get_fields().items():
        if isinstance(f, serializers.CharField) and f.max_length == settings.ARENA_MAX_CODE_CHARS:
            names.add(name)
        child = getattr(f, "child", f)
        if isinstance(child, serializers.Serializer):
            names |= _code_fields(type(child))
    return names


def test_the_list_covers_every_code_field_the_server_accepts_or_stores(db):
    import ingest.extension_serializers as ext
    import ingest.serializers as native
    import serving.serializers as serving
    from ingest.models import CodeContext

    accepted = set(CodeContext.FIELDS)
    for module in (native, ext, serving):
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, serializers.Serializer):
                accepted |= _code_fields(obj)
    assert accepted >= {"prefix", "codeToEdit", "completion_a"}  # the walk found them
    assert {_norm(n) for n in accepted} <= CODE_FIELDS


@pytest.fixture
def sentry_events(settings):
    """Sentry initialised as settings does, with a transport that keeps the events."""
    import sentry_sdk
    from sentry_sdk.transport import Transport

    from arena_site.sentry import init_sentry

    events: list[dict] = []

    class Keep(Transport):
        def capture_envelope(self, envelope):
            for item in envelope.items:
                if item.type == "event":
                    events.append(json.loads(item.payload.get_bytes()))

    init_sentry(
        dsn="https://public@sentry.invalid/1",
        environment="test",
        traces_sample_rate=0.0,
        transport=Keep,
    )
    yield events
    sentry_sdk.get_client().close()
    sentry_sdk.init()  # no DSN: reporting off for the rest of the session


def test_an_error_in_a_vote_reaches_sentry_without_the_code(
    sentry_events, models, monkeypatch, client
):
    from tests.ingest.payloads import outcome_payload

    def broken(**kwargs):
        raise RuntimeError("storage exploded")

    # Made at run time: the event's source-context lines (this file) cannot contain them.
    code, user = f"secret_{uuid.uuid4().hex}()", f"machine-{uuid.uuid4().hex}"
    monkeypatch.setattr("ingest.extension_views.record_battle", broken)
    client.raise_request_exception = False
    body = outcome_payload(0)
    body["userId"] = user
    for item in body["completionItems"]:
        item.update(prompt=code, completion=code, prefix=code, userId=user)
    r = client.put("/add_completion_outcome", json.dumps(body), content_type="application/json")
    assert r.status_code == 500
    assert len(sentry_events) == 1
    event = sentry_events[0]
    assert event["exception"]["values"][-1]["value"] == "storage exploded"
    # The body was sent (so the scrubber, not its absence, kept the code out) ...
    assert event["request"]["data"]["fileType"] == "python"
    sent = json.dumps(event)
    # ... and nothing of the code or the user id is in the event.
    assert code not in sent and user not in sent
