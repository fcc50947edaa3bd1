"""import_battles / export_battles: the real sample CSV and a JSONL round trip."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from catalogue.services import seed_demo_catalogue
from ingest.models import Battle, CodeContext, Outcome

SAMPLE = (
    Path(__file__).parents[2]
    / "arena_site"
    / "data"
    / "copilot-arena-sample"
    / "copilot_arena_examples_v1.csv"
)


@pytest.fixture
def catalogue(db):
    seed_demo_catalogue()


def run(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    extra = ("--quiet-progress",) if args[0] == "import_battles" else ()
    call_command(*args, *extra, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_sample_csv_imports_112_and_reports_the_malformed_row(catalogue):
    out, err = run("import_battles", str(SAMPLE))
    assert Battle.objects.count() == 112
    assert "112 imported" in out and "1 rejected" in out
    rejected = [line for line in err.splitlines() if "rejected" in line]
    assert len(rejected) == 1
    assert "model_a" in rejected[0] and "null" in rejected[0]
    # top completion won 92 of 112 times in the released sample (the published 82%)
    assert Battle.objects.filter(outcome=Outcome.A).count() == 92
    assert CodeContext.objects.count() == 112


def test_reimport_is_idempotent(catalogue):
    run("import_battles", str(SAMPLE))
    out, _ = run("import_battles", str(SAMPLE))
    assert "0 imported" in out and "112 already present" in out
    assert Battle.objects.count() == 112


def test_unknown_model_rows_are_rejected_and_the_error_names_the_option(db, tmp_path):
    # Without the catalogue every row names unknown models: every row is rejected, which
    # fails the command, and the message says how to add the models.
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError, match=r"113 rejected\. Every row was rejected"):
        call_command("import_battles", str(SAMPLE), "--quiet-progress", stdout=out, stderr=err)
    assert Battle.objects.count() == 0
    assert "Unknown model key" in err.getvalue()
    assert "rerun with --add-unknown-models" in err.getvalue()
    assert "codestral-2405" in err.getvalue()


def test_jsonl_round_trip_keeps_users_and_code(catalogue, tmp_path):
    run("import_battles", str(SAMPLE))
    before = list(
        Battle.objects.order_by("pair_id").values_list(
            "pair_id", "user_hash", "model_a__key", "model_b__key", "outcome"
        )
    )
    path = tmp_path / "export.jsonl"
    call_command("export_battles", "--output", str(path), "--include-code", stderr=io.StringIO())
    lines = path.read_text().splitlines()
    assert len(lines) == 112
    assert "prefix" in json.loads(lines[0])
    Battle.objects.all().delete()
    out, _ = run("import_battles", str(path))
    assert "112 imported" in out
    after = list(
        Battle.objects.order_by("pair_id").values_list(
            "pair_id", "user_hash", "model_a__key", "model_b__key", "outcome"
        )
    )
    assert after == before
    assert CodeContext.objects.count() == 112


def test_jsonl_bad_lines_are_reported(catalogue, tmp_path):
    path = tmp_path / "bad.jsonl"
    good = {
        "pair_id": "j1",
        "user_id": "u",
        "model_a": "codestral-2405",
        "model_b": "gpt-4o-2024-08-06",
        "outcome": "model_b",
        "privacy": "Private",
    }
    path.write_text(
        "\n".join(
            [
                json.dumps(good),
                "{not json",
                json.dumps({**good, "pair_id": "j2", "outcome": "draw"}),
                "[1, 2]",
            ]
        )
        + "\n"
    )
    out, err = run("import_battles", str(path))
    assert "1 imported" in out and "3 rejected" in out
    assert "bad.jsonl:2: rejected: not valid JSON" in err
    assert "bad.jsonl:3: rejected: outcome" in err
    assert "bad.jsonl:4: rejected" in err


def test_unknown_extension_is_a_command_error(db, tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("hello")
    with pytest.raises(CommandError, match=r"expected \.csv, \.jsonl or \.parquet"):
        run("import_battles", str(path))
