"""A vote sent with `Transfer-Encoding: chunked` straight to a gunicorn pool is read and stored.

gunicorn de-chunks the body but sends no Content-Length, and Django read such a body as
empty (400 "pair_id: required"); arena_site/chunked.py reads it first. One over the route's
limit is still the usual 413.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ingest.models import Battle
from tests.ingest.payloads import vote

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def pool(transactional_db, models, settings, tmp_path):
    from django.db import connection

    db = connection.settings_dict
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "RECOMPUTE_ON_VOTES": "0",
        "ARENA_PRELOAD_LABELS": "0",
        "ARENA_MAX_BODY_BYTES": "100000",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"),
    }  # fmt: skip
    log = (tmp_path / "gunicorn.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "python:arena_site.gunicorn_conf",
         "--bind", f"127.0.0.1:{port}", "--workers", "1"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None, (tmp_path / "gunicorn.log").read_text()
            time.sleep(0.2)
    yield port
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


def _chunked(port: int, path: str, body: bytes) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    pieces = [body[i : i + 1000] for i in range(0, len(body), 1000)]
    conn.request(
        "POST", path, body=iter(pieces), encode_chunked=True,
        headers={"Content-Type": "application/json", "Host": "127.0.0.1"},
    )  # fmt: skip
    resp = conn.getresponse()
    data = json.loads(resp.read() or b"{}")
    conn.close()
    return resp.status, data


def test_a_chunked_vote_is_stored(pool):
    body = json.dumps(vote(pair_id="chunked-1", user_id="chunky")).encode()
    status, data = _chunked(pool, "/api/v1/battles", body)
    assert status == 201, data
    assert Battle.objects.filter(pair_id="chunked-1").exists()


def test_a_chunked_body_over_the_limit_is_413(pool):
    body = json.dumps(vote(pair_id="chunked-2", prefix="x" * 150_000)).encode()
    status, data = _chunked(pool, "/api/v1/battles", body)
    assert status == 413 and data["error"] == "body_too_large", data
    assert not Battle.objects.filter(pair_id="chunked-2").exists()
