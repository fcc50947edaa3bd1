"""Schemathesis against a live server: every operation, every check, 0 server errors, 0 schema violations.

The server is pytest-django's `live_server` (this test's database, Redis db, settings) with
a catalogue, an API key and a published board, so reads, votes and batches all have
something real to answer. Schemathesis (its CLI, as a user would run it) reads
`/api/schema/`, runs the examples, coverage and fuzzing phases with all its checks, and
writes a JSON report; the test reads the case count and the failures from it.

Two deliberate choices, both visible below:
* `/create_pair` and `/create_edit_pair` are left out: they call outside model providers
  and answer 502/503/504 by design when none can serve, which the server-error check
  cannot tell from a crash (tests/serving covers them with stub providers).
* `positive_data_acceptance` also expects 400: some rules of a vote cannot be written in
  OpenAPI (the two models must differ; `pairIndex` must be 0 for one item and 1 for the
  other), so a body valid by the schema may still be refused for them.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.core.management import call_command

from catalogue.services import seed_demo_catalogue
from core.heartbeat import beat
from core.services import issue_api_key
from leaderboard.models import RatingConfig
from leaderboard.recompute import recompute

pytestmark = pytest.mark.integration

MIN_CASES = 1_000
CONFIG = """
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "400", "401", "403", "404", "409", "429"]

[checks.negative_data_rejection]
# Schemathesis' own list plus 413: a body over the size limit is refused before parsing.
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "429"]
"""


@pytest.fixture
def site(transactional_db, settings):
    settings.ARENA_THROTTLE_RATES = {name: "100000/min" for name in settings.ARENA_THROTTLE_RATES}
    seed_demo_catalogue()
    config = RatingConfig.current()
    config.rounds, config.slice_rounds = 20, 10
    config.save()
    call_command("simulate_battles", "--battles", "2000", "--seed", "7", stdout=io.StringIO())
    recompute(trigger="test")
    _client, key = issue_api_key(name="schemathesis")
    # No Celery worker runs here, and /healthz would rightly say 503: beat as one would.
    stop = threading.Event()

    def beating() -> None:
        while True:
            beat("celery@schemathesis")
            if stop.wait(2.0):
                return

    thread = threading.Thread(target=beating, daemon=True)
    thread.start()
    yield key
    stop.set()
    thread.join()


def test_schemathesis_finds_no_server_error_and_no_schema_violation(live_server, site, tmp_path):
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG)
    report = tmp_path / "report.json"
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "--config-file",
        str(config),
        "run",
        f"{live_server.url}/api/schema/?format=json",
        "--checks",
        "all",
        "--phases",
        "examples,coverage,fuzzing",
        "--exclude-path-regex",
        "^/create_",
        "--max-examples",
        "50",
        "--seed",
        "12",
        "--workers",
        "1",
        "--request-timeout",
        "30",
        "--header",
        f"Authorization: Bearer {site}",
        "--generation-database",
        "none",
        "--report",
        "json",
        "--report-json-path",
        str(report),
        "--no-color",
    ]
    # cwd: schemathesis keeps replay files under .schemathesis/ in its working directory.
    run = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    out = run.stdout
    # Failures print the whole request; keep the report readable.
    shown = "\n".join(line[:400] for line in out[out.find("FAILURES") :].splitlines())
    data = json.loads(report.read_text())
    cases = data["test_cases"]
    print(f"\nschemathesis: {cases} failures={data['failures']}")
    assert data["complete"] and data["stop_reason"] == "completed", shown
    assert cases["generated"] >= MIN_CASES, cases
    assert data["failures"] == [] and data["errors"] == [], shown
    assert cases["with_failures"] == 0 and run.returncode == 0, shown
