"""The import/export commands as a newcomer meets them: exit status, one-line errors, new models."""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from catalogue.models import ArenaModel
from core.models import AuditEntry

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "arena_site" / "data" / "copilot-arena-sample" / "copilot_arena_examples_v1.csv"


def _import(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_battles", *args, "--quiet-progress", stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_add_unknown_models_creates_them_audited_and_imports(db):
    with SAMPLE.open(newline="") as f:
        named = {
            row[c]
            for row in csv.DictReader(f)
            for c in ("model_a", "model_b")
            if (row[c] or "").strip()
        }
    out, _ = _import(str(SAMPLE), "--add-unknown-models")
    assert "112 imported" in out
    # Exactly the models the file names now exist, named after their keys, audited.
    keys = set(ArenaModel.objects.values_list("key", flat=True))
    assert keys == named
    assert ArenaModel.objects.get(key="codestral-2405").display_name == "codestral-2405"
    assert (
        set(AuditEntry.objects.filter(action="add_model").values_list("target", flat=True)) == keys
    )
    assert f"Added {len(named)} model(s)" in out


def test_an_empty_file_is_an_error(db, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(CommandError, match="no battles in this file"):
        _import(str(empty))


def test_a_directory_is_a_one_line_error(db, tmp_path):
    with pytest.raises(CommandError, match="is a directory, not a file"):
        _import(str(tmp_path))


def test_an_unreadable_file_is_a_one_line_error(db, tmp_path, monkeypatch):
    f = tmp_path / "locked.jsonl"
    f.write_text("{}\n")
    f.chmod(0)
    # The suite may run as root, which reads any file: answer as the kernel would for others.
    monkeypatch.setattr("core.cli.os.access", lambda path, mode: False)
    with pytest.raises(CommandError, match="not readable"):
        _import(str(f))


def test_a_binary_file_is_a_one_line_error(db, tmp_path):
    f = tmp_path / "binary.jsonl"
    f.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(CommandError, match=r"binary\.jsonl"):
        _import(str(f))


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("cut.jsonl.gz", gzip.compress(b'{"pair_id": "p"}\n' * 50)[:-12]),
        ("plain.jsonl.gz", b'{"pair_id": "p"}\n'),
        ("not.parquet", b"PAR1 but nothing else"),
    ],
)
def test_a_broken_compressed_or_parquet_file_is_a_one_line_error(db, tmp_path, name, content):
    f = tmp_path / name
    f.write_bytes(content)
    with pytest.raises(CommandError, match=re.escape(name)):
        _import(str(f))


def test_the_command_line_shows_one_line_and_exits_1(tmp_path):
    # In a fresh process, as typed: the error is one line on stderr, no traceback.
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(SQLITE_PATH=str(tmp_path / "cli.sqlite3"), DEBUG="1")
    result = subprocess.run(
        [sys.executable, "manage.py", "import_battles", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"CommandError: {tmp_path}: is a directory, not a file"
    ]


def test_export_to_an_unwritable_path_is_a_one_line_error(db, tmp_path):
    with pytest.raises(CommandError, match="cannot write"):
        call_command("export_battles", "-o", str(tmp_path), stderr=io.StringIO())


def test_export_writes_no_progress_bar_when_not_on_a_terminal(db, tmp_path):
    _import(str(SAMPLE), "--add-unknown-models")
    err, summary = io.StringIO(), io.StringIO()
    out = tmp_path / "x.jsonl"
    call_command("export_battles", "-o", str(out), stderr=err, stdout=summary)
    assert err.getvalue() == ""  # the summary is not an error
    assert summary.getvalue().strip() == f"Exported 112 battle(s) to {out}."
    assert len([json.loads(line) for line in out.read_text().splitlines()]) == 112


def test_export_to_stdout_keeps_the_summary_beside_the_data_in_plain_style(db):
    _import(str(SAMPLE), "--add-unknown-models")
    err, data = io.StringIO(), io.StringIO()
    call_command("export_battles", stderr=err, stdout=data, force_color=True)
    assert err.getvalue().strip() == "Exported 112 battle(s)."  # no colour codes
