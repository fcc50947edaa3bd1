"""Board reads from a real streaming replica; everything else, the count tables above all, from the primary.

Starts a private PostgreSQL (initdb) and a standby made from it with `pg_basebackup -R`,
migrates the primary, and runs a script in a fresh process whose settings name both
(`DATABASE_URL`, `DATABASE_REPLICA_URL`). With the standby's replay paused, a snapshot
published on the primary is missing from a GET request's reads (they come from the replica)
and present everywhere else; the UNLOGGED count tables, which a standby cannot read at all,
are read in that same request from the primary; once replay resumes the request sees it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from benchmarks.drill_stack import PG_BIN, Postgres, Standby

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, time
from django.db import connections
from django.http import HttpResponse
from django.test import RequestFactory
from django.utils import timezone
from core.db_router import ReplicaReadsMiddleware
from leaderboard.models import CellTotal, Snapshot

def publish():
    Snapshot.objects.create(status="published", computed_at=timezone.now(), method="bt")

def on_replica(sql):
    with connections["replica"].cursor() as c:
        c.execute(sql)
        return c.fetchone()[0]

def wait(predicate):
    deadline = time.monotonic() + 120
    while not predicate():
        assert time.monotonic() < deadline, "replica did not catch up"
        time.sleep(0.1)

def seen(request):
    # What a page would read: the board (routed) and the count tables (never routed).
    published = Snapshot.objects.filter(status="published").count()
    counts = CellTotal.objects.count()
    return HttpResponse(json.dumps([published, counts]))

view = ReplicaReadsMiddleware(seen)
get = lambda: json.loads(view(RequestFactory().get("/")).content)
post = lambda: json.loads(view(RequestFactory().post("/")).content)
out = {}
publish()
wait(lambda: on_replica("SELECT count(*) FROM leaderboard_snapshot") == 1)
out["in_recovery"] = on_replica("SELECT pg_is_in_recovery()")
on_replica("SELECT pg_wal_replay_pause()")
publish()
out["paused_get"], out["paused_post"] = get(), post()
out["admin_get"] = json.loads(view(RequestFactory().get("/admin/")).content)
try:
    on_replica("SELECT count(*) FROM leaderboard_celltotal")
    out["unlogged_on_replica"] = "readable"
except Exception as exc:
    out["unlogged_on_replica"] = type(exc).__name__
connections["replica"].close()
on_replica("SELECT pg_wal_replay_resume()")
wait(lambda: get()[0] == 2)
out["resumed_get"] = get()
print(json.dumps(out))
"""


@pytest.mark.integration
def test_board_reads_go_to_the_replica_and_nothing_else_does():
    if not PG_BIN:
        pytest.skip("needs PostgreSQL's server binaries (/usr/lib/postgresql/*/bin)")
    # Under /tmp, readable by the postgres user (pytest's tmp_path is private to us).
    base = Path(tempfile.mkdtemp(prefix="arena-replica-"))
    base.chmod(0o755)
    primary = Postgres(base)
    standby = Standby(primary)
    try:
        primary.init()
        standby.start()
        env = {
            **os.environ,
            "DATABASE_URL": primary.url,
            "DATABASE_REPLICA_URL": standby.url,
            "REDIS_URL": "",
            "SECRET_KEY": "replica-test",
            "USER_ID_HMAC_KEY": "replica-test-pseudonyms",
        }
        run = lambda *args: subprocess.run(  # noqa: E731
            [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True,
            capture_output=True, text=True,
        )  # fmt: skip
        run("migrate", "--noinput", "-v0")
        out = json.loads(run("shell", "-c", SCRIPT).stdout.strip().splitlines()[-1])
    finally:
        standby.stop()
        with contextlib.suppress(subprocess.CalledProcessError):
            primary.stop("immediate")
        shutil.rmtree(base, ignore_errors=True)
    assert out["in_recovery"] is True, "the standby is a real replica"
    # Replay paused: the GET reads the board from the replica (1 snapshot), the counts from
    # the primary; a POST and the admin read everything from the primary (2 snapshots).
    assert out["paused_get"] == [1, 0]
    assert out["paused_post"] == [2, 0] and out["admin_get"] == [2, 0]
    assert out["unlogged_on_replica"] != "readable", "a standby cannot read UNLOGGED tables"
    assert out["resumed_get"] == [2, 0]
