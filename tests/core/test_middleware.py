"""The body limit follows from the field limits: a vote whose every field is within its limit
is never a 413, and nginx lets such a body through too."""

from __future__ import annotations

import json
import re
from pathlib import Path

from django.conf import settings

from ingest.extension_serializers import CompletionItemSerializer, EditItemSerializer
from ingest.models import Battle
from tests.ingest.payloads import edit_payload

ROOT = Path(__file__).resolve().parents[2]
CODE_FIELDS_PER_EDIT_ITEM = ("prompt", "response", "prefix", "suffix", "codeToEdit", "userInput")


def test_the_largest_vote_has_the_code_fields_the_limit_assumes():
    from core.fields import CodeTextField

    per_item = {
        s.__name__: sum(isinstance(f, CodeTextField) for f in s().fields.values())
        for s in (CompletionItemSerializer, EditItemSerializer)
    }
    assert 2 * max(per_item.values()) == settings.VOTE_CODE_FIELDS, per_item


def test_an_edit_vote_with_every_code_field_full_is_not_413(api, models):
    # Every character one JSON writes as six bytes: the most a field within its limit costs.
    full = "\x01" * settings.ARENA_MAX_CODE_CHARS
    body = edit_payload(1)
    for item in body["responseItems"]:
        for field in CODE_FIELDS_PER_EDIT_ITEM:
            item[field] = full
    data = json.dumps(body)
    assert len(data) > 14_000_000 and len(data) <= settings.ARENA_MAX_BODY_BYTES
    r = api.put("/add_edit_outcome", data=data, content_type="application/json")
    assert r.status_code == 200, r.content[:300]
    assert Battle.objects.filter(pair_id="edit-1").exists()


def test_one_byte_over_the_limit_is_413(api, models):
    body = edit_payload(1)
    body["responseItems"][0]["prompt"] = "x" * 100
    data = json.dumps(body)
    padded = data[:-1] + " " * (settings.ARENA_MAX_BODY_BYTES + 1 - len(data)) + "}"
    r = api.put("/add_edit_outcome", data=padded, content_type="application/json")
    assert r.status_code == 413 and r.json()["error"] == "body_too_large"


def _megabytes(size: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([km]?)", size).groups()
    return int(number) * {"": 1, "k": 1024, "m": 1024 * 1024}[unit]


def test_nginx_passes_every_body_the_app_accepts():
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    active = "\n".join(line for line in conf.splitlines() if not line.lstrip().startswith("#"))
    sizes = [_megabytes(m) for m in re.findall(r"client_max_body_size\s+(\w+);", active)]
    assert min(sizes) >= settings.ARENA_MAX_BODY_BYTES
    assert max(sizes) >= settings.ARENA_MAX_BATCH_BODY_BYTES
