"""A vote is never refused for a labeller's bug: the NBSP line, and any labeller that raises."""

from __future__ import annotations

import json
import logging

import pytest

from analysis.labels import LABELER_VERSION, label_context
from analysis.labels import natural_language as nl
from analysis.labels import task_type as tt
from core.metrics import LABELLER_FAILURES
from ingest.labelling import label_columns
from ingest.models import Battle
from tests.ingest.payloads import outcome_payload

WHITESPACE_LINES = ["\u00a0", "\u3000", "\u2003", "\u001f", "\u00a0\u00a0", "-\u00a0", "\t\u3000 "]


@pytest.mark.parametrize("line", WHITESPACE_LINES, ids=[hex(ord(c[0])) for c in WHITESPACE_LINES])
def test_a_line_of_unicode_whitespace_labels(line):
    prefix = f"def f():\n{line}\n    return 1\n"
    labels = label_context(file_type="python", prefix=prefix, suffix=line)
    assert labels.task_type in tt.TASK_TYPES
    features = tt.extract_features(programming_language="python", prefix=prefix, suffix="")
    assert "" not in features.line_heads


@pytest.mark.parametrize("privacy", ["Research", "Private", "Debug"])
def test_nbsp_vote_is_stored_on_the_extension_route(api, models, privacy):
    body = outcome_payload(privacy=privacy, pairId=f"nbsp-{privacy}")
    for item in body["completionItems"]:
        item["prefix"] = "x = 1\n\u00a0\nprint(x)\n"
    r = api.put("/add_completion_outcome", data=json.dumps(body), content_type="application/json")
    assert r.status_code == 200, r.content
    assert Battle.objects.filter(pair_id=f"nbsp-{privacy}").exists()


def test_the_guarded_labels_equal_label_context_when_nothing_fails():
    prefix, suffix = "import numpy as np\n# compute the mean\n", "\nprint(x)\n"
    labels = label_context(file_type="python", prefix=prefix, suffix=suffix)
    assert label_columns(file_type="python", prefix=prefix, suffix=suffix) == {
        "language": labels.programming_language,
        "natural_language": labels.natural_language,
        "context_tokens": labels.context_tokens,
        "context_bucket": labels.context_bucket,
        "task_type": labels.task_type,
        "labeler_version": LABELER_VERSION,
    }


def _boom(**_kwargs):
    raise IndexError("list index out of range: SECRET-CODE-LINE")


def test_a_raising_labeller_stores_unknown_logs_once_without_code_and_counts(
    api, models, monkeypatch, caplog
):
    monkeypatch.setattr(tt, "default_task_type_classifier", _boom)
    before = LABELLER_FAILURES.labels(labeller="task_type")._value.get()
    body = outcome_payload(privacy="Private", pairId="boom-1")
    for item in body["completionItems"]:
        item["prefix"] = "SECRET-CODE-LINE = 1\n"
    with caplog.at_level(logging.WARNING, logger="ingest.labelling"):
        r = api.put(
            "/add_completion_outcome", data=json.dumps(body), content_type="application/json"
        )
    assert r.status_code == 200, r.content
    battle = Battle.objects.get(pair_id="boom-1")
    assert battle.task_type == "unknown"
    assert battle.language == "python"  # the other labels keep their values
    assert battle.labeler_version.endswith(".taskx")
    assert LABELLER_FAILURES.labels(labeller="task_type")._value.get() == before + 1
    records = [r for r in caplog.records if r.name == "ingest.labelling"]
    assert len(records) == 1
    assert "task_type" in records[0].getMessage() and "IndexError" in records[0].getMessage()
    assert "SECRET-CODE-LINE" not in caplog.text


def test_every_labeller_failing_still_stores_the_vote(keyed_api, models, monkeypatch):
    from analysis.labels import context_length as ctx
    from analysis.labels import programming_language as pl

    monkeypatch.setattr(tt, "default_task_type_classifier", _boom)
    monkeypatch.setattr(nl, "detect_natural_language", _boom)
    monkeypatch.setattr(ctx, "context_tokens", _boom)
    monkeypatch.setattr(pl, "normalize_language", lambda _ft: _boom())
    body = {
        "pair_id": "all-fail",
        "user_id": "u1",
        "model_a": "gpt-4o-2024-08-06",
        "model_b": "codestral-2405",
        "outcome": "model_a",
        "privacy": "Research",
        "file_type": "python",
        "prefix": "def f():\n",
        "suffix": "\n",
    }
    r = keyed_api.post("/api/v1/battles", data=json.dumps(body), content_type="application/json")
    assert r.status_code == 201, r.content
    battle = Battle.objects.get(pair_id="all-fail")
    assert (battle.language, battle.natural_language, battle.task_type) == ("unknown",) * 3
    assert battle.context_bucket == "unknown" and battle.context_tokens is None
    assert battle.labeler_version == "plx.nlx.ctxx.taskx"
