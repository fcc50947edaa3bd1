"""Releases are private by construction: planted secrets, Private code, raw ids, addresses and
account names never reach a released file; options, keys and the card's counts."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import subprocess
from datetime import timedelta

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from ingest.models import Battle, BattleSource, CodeContext
from releases.models import DatasetRelease
from tests.releases.helpers import (
    ADDRESS,
    CLEAN_CODE,
    CLIENT_NAME,
    post,
    release,
    release_text,
    rows,
)
from tests.releases.test_secret_scan import PLANTED


def test_planted_secrets_reach_no_released_file(models, keyed_api, release_dir):
    for n, secret in enumerate(PLANTED.values()):
        code = {"prefix": f"import os\n{secret}\n", "suffix": "\nmain()\n"}
        post(keyed_api, n, user=f"dev-{n}", **code)
    # A secret the model completed, and one in an edit instruction.
    post(keyed_api, 50, user="dev-50", prefix="x = 1\n", completion_a=PLANTED["stripe key"])
    post(keyed_api, 51, user="dev-51", kind="edit", user_input=PLANTED["password in a url"])
    post(keyed_api, 60, user="dev-60", prefix=CLEAN_CODE, completion_a="    pass\n")

    for on_secret in ("redact", "drop"):
        r = release(on_secret=on_secret)
        text = release_text(release_dir, r)
        for secret in PLANTED.values():
            for line in secret.splitlines():
                assert line not in text, (on_secret, line)
        assert CLEAN_CODE.splitlines()[0] in text  # clean Research code is released
        assert r.counts["secret_flagged"] == len(PLANTED) + 2
        assert r.counts["research_rows"] == len(PLANTED) + 3
        released = rows(release_dir, r)
        if on_secret == "redact":
            assert len(released) == len(PLANTED) + 3  # the votes stay
            assert sum(row["code_redacted"] for row in released) == len(PLANTED) + 2
        else:
            assert len(released) == 1
        card = (release_dir / r.version / "README.md").read_text()
        assert f"{len(PLANTED) + 2} of {len(PLANTED) + 3} battles with code were flagged" in card
        assert "Private Key" in card and "High entropy token" in card


def test_no_private_code_raw_id_address_or_account_name_is_released(models, keyed_api, release_dir):
    post(keyed_api, 1, user="machine-raw-id-1", privacy="Private", prefix="PRIVATE_MARKER_1 = 1\n")
    post(keyed_api, 2, user="machine-raw-id-2", privacy="Debug", prefix="DEBUG_MARKER_2 = 2\n")
    post(
        keyed_api,
        3,
        user="machine-raw-id-3",
        prefix=CLEAN_CODE,
        repo_url="https://github.com/alice-account/private-repo",
    )
    post(keyed_api, 4, user="", prefix=CLEAN_CODE)  # no user id
    # Code of a Private vote written by some other path (an old bug, a manual insert): the
    # release takes code from Research votes only, whatever the tables hold.
    private = Battle.objects.get(pair_id="live-pair-1")
    CodeContext.objects.create(battle=private, prefix="LEAKED_PRIVATE_CODE = 1\n")

    r = release()
    text = release_text(release_dir, r)
    for forbidden in (
        "PRIVATE_MARKER_1",
        "DEBUG_MARKER_2",
        "LEAKED_PRIVATE_CODE",
        "machine-raw-id",
        "alice-account",
        ADDRESS,
        CLIENT_NAME,
        "live-pair-",
        *Battle.objects.exclude(user_hash="").values_list("user_hash", flat=True),
        *Battle.objects.exclude(ip_hash="").values_list("ip_hash", flat=True),
    ):
        assert forbidden not in text, forbidden
    assert Battle.objects.exclude(ip_hash="").count() == 4  # there were addresses to leak
    released = {row["privacy"]: row for row in rows(release_dir, r) if row["user_hash"]}
    assert released["Private"]["prefix"] is None and released["Debug"]["prefix"] is None
    assert released["Research"]["prefix"] == CLEAN_CODE
    assert [row["user_hash"] for row in rows(release_dir, r)].count(None) == 1  # no user: null


def test_options_and_left_out_counts(models, keyed_api, release_dir):
    for n in range(6):
        post(keyed_api, n, user=f"dev-{n}")
    old = timezone.now() - timedelta(days=40)
    Battle.objects.filter(pair_id__in=["live-pair-0", "live-pair-1", "live-pair-2"]).update(
        received_at=old
    )
    Battle.objects.filter(pair_id="live-pair-1").update(excluded=True, excluded_reason="test")
    Battle.objects.filter(pair_id="live-pair-2").update(source=BattleSource.SIMULATED)
    Battle.objects.filter(pair_id="live-pair-3").update(received_at=old, source="external")

    # As docs/data.md shows it.
    call_command("release_dataset", "--min-age-days", "30", "--license", "cc-by-4.0",
                 stdout=io.StringIO())  # fmt: skip
    r = DatasetRelease.objects.get()
    assert r.counts["battles"] == 1
    assert r.counts["left_out"] == {
        "newer than cutoff": 2,
        "other arenas": 1,
        "simulated": 1,
        "excluded": 1,
    }
    card = (release_dir / r.version / "README.md").read_text()
    assert "Only battles older than 30 day(s)" in card and "  - simulated: 1" in card

    r = release(min_age_days=30, include_simulated=True, include_excluded=True)
    assert r.counts["battles"] == 3
    got = {(row["source"], row["excluded"]) for row in rows(release_dir, r)}
    assert got == {("api", False), ("api", True), ("simulated", False)}


def test_pseudonyms_are_keyed_per_release_unless_stable_ids(models, keyed_api, release_dir):
    for n in range(4):
        post(keyed_api, n, user=f"dev-{n % 2}")

    def ids(r):
        return {row["user_hash"] for row in rows(release_dir, r)}, {
            row["id"] for row in rows(release_dir, r)
        }

    first, second = release(), release()
    assert len(ids(first)[0]) == 2
    assert ids(first)[0].isdisjoint(ids(second)[0]) and ids(first)[1].isdisjoint(ids(second)[1])
    stable_1, stable_2 = release(stable_ids=True), release(stable_ids=True)
    assert ids(stable_1) == ids(stable_2)
    live = set(Battle.objects.values_list("user_hash", flat=True))
    assert ids(stable_1)[0].isdisjoint(live)
    assert [r.version for r in (first, second, stable_1, stable_2)] == [
        first.version,
        f"{first.version}.2",
        f"{first.version}.3",
        f"{first.version}.4",
    ]


def test_files_card_manifest_and_checksums(models, keyed_api, release_dir):
    for n in range(5):
        post(keyed_api, n, user=f"dev-{n}", prefix=CLEAN_CODE, completion_a="    pass\n")
    out = io.StringIO()
    call_command("release_dataset", "--min-age-days", "0", "--license", "odc-by", stdout=out)
    r = DatasetRelease.objects.get()
    assert r.status == DatasetRelease.Status.READY and "5 battles" in out.getvalue()
    directory = release_dir / r.version
    names = {p.name for p in directory.iterdir()}
    assert names == {
        "battles.parquet",
        "battles.jsonl.gz",
        "copilot_arena.csv",
        "README.md",
        "manifest.json",
        "SHA256SUMS",
    }
    check = subprocess.run(
        ["sha256sum", "-c", "SHA256SUMS"], cwd=directory, capture_output=True, text=True
    )
    assert check.returncode == 0 and check.stdout.count(": OK") == 5, check.stdout
    for line in (directory / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split("  ")
        assert hashlib.sha256((directory / name).read_bytes()).hexdigest() == digest
    assert r.size_bytes == sum(p.stat().st_size for p in directory.iterdir())
    card = (directory / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["license"] == "odc-by"
    assert header["dataset_info"]["splits"][0]["num_examples"] == 5
    assert [f["name"] for f in header["dataset_info"]["features"]][:4] == [
        "id",
        "model_a",
        "model_b",
        "winner",
    ]
    manifest = json.loads((directory / "manifest.json").read_text())
    assert {f["name"] for f in manifest["files"]} >= {"battles.parquet", "README.md"}
    lines = gzip.decompress((directory / "battles.jsonl.gz").read_bytes()).decode().splitlines()
    jsonl = [json.loads(line) for line in lines]
    assert jsonl == rows(release_dir, r)
    csv_lines = (directory / "copilot_arena.csv").read_text().splitlines()
    assert csv_lines[0] == "prefix,suffix,model_a,model_b,acceptedIndex,completion_a,completion_b"


def test_a_release_name_is_a_safe_unused_directory_name(db, release_dir):
    def make(*args):
        call_command("release_dataset", "--min-age-days", "0", *args, stdout=io.StringIO())

    for bad in ("../outside", "a/b", ".hidden"):
        with pytest.raises(CommandError, match="--name: Letters, digits"):
            make("--name", bad)
    make("--name", "v1")
    with pytest.raises(CommandError, match="--name: version 'v1' exists already"):
        make("--name", "v1")
    assert [p.name for p in release_dir.iterdir()] == ["v1"]
    assert DatasetRelease.objects.get().counts["battles"] == 0
