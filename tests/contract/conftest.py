"""Fixtures of the extension contract test: the bundle, a live server with stub providers, runs.

The server runs in this process (Django's LiveServerThread, as pytest-django's `live_server`
does) for the whole module, on the test database, committed for real: the driver runs the
extension in a Node process against it, then the tests read what it stored. One driver run per
privacy setting, started by the first test that needs it; the database is flushed when the
module ends. Each run has its own machine id and its own marker in every piece of code it
types, so one run's code can be looked for everywhere without confusing it with another's.
"""

from __future__ import annotations

import io
import json
import logging
import os
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.contract import arena
from tests.serving.stub_provider import StubProvider

HERE = Path(__file__).parent
VOTES = 20  # the personal board's minimum; keeps a run under the 120/min vote limit today
NODE_TIMEOUT = 600


def _tool(name: str) -> str:
    path = shutil.which(name)
    if not path:
        pytest.fail(f"`{name}` not found: the contract test needs Node.js 18+ and npm (.ci/run installs them).")
    return path


@pytest.fixture(scope="session")
def bundle() -> Path:
    """`npm ci` when node_modules is missing or older than the lock file, then the build."""
    node, npm = _tool("node"), _tool("npm")
    installed = HERE / "node_modules" / ".package-lock.json"
    lock = HERE / "package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=HERE, check=True, timeout=NODE_TIMEOUT
        )
    out = subprocess.run(
        [node, "build.js"], cwd=HERE, check=True, capture_output=True, text=True, timeout=120
    )
    return Path(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def stub_provider():
    with StubProvider() as stub:
        yield stub


@dataclass
class Run:
    privacy: str
    machine_id: str
    marker: str
    repo_url: str
    report: dict
    server_log: str
    redis: bytes  # every key and value of the cache's Redis database right after the run
    seconds: float

    @property
    def secrets(self) -> list[str]:
        """Strings that exist only in this run's code: none may be stored unless Research."""
        return [
            f"CONTRACT_PREFIX_{self.marker}",
            f"CONTRACT_SUFFIX_{self.marker}",
            f"CODE_TO_EDIT_{self.marker}",
            f"EDIT_INSTRUCTION_{self.marker}",
            f"COMPLETION_{self.marker}",
            self.repo_url,
        ]

    def calls(self, route: str, method: str | None = None) -> list[dict]:
        return [
            c
            for c in self.report["calls"]
            if "/" + c["path"].lstrip("/") == route and (method is None or c["method"] == method)
        ]

    @property
    def pairs(self) -> list[dict]:
        """Every pair the server answered, shown or not."""
        return [c["response"] for c in self.calls("/create_pair") if c["status"] == 200]


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines = io.StringIO()

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.write(record.getMessage() + "\n")


class Runner:
    """Runs the driver once per (privacy, trailing slash) and keeps the result."""

    def __init__(self, *, url, bundle, stub, blocker, workdir) -> None:
        self.url, self.bundle, self.stub = url, bundle, stub
        self.blocker, self.workdir = blocker, workdir
        self.done: dict[tuple[str, bool], Run] = {}

    def get(self, privacy: str, *, trailing_slash: bool = False) -> Run:
        key = (privacy, trailing_slash)
        if key not in self.done:
            self.done[key] = self._run(privacy, trailing_slash)
        return self.done[key]

    def _run(self, privacy: str, trailing_slash: bool) -> Run:
        from serving import dbwork

        marker = f"{privacy.upper()}{uuid.uuid4().hex[:10]}"
        cfg = {
            "bundle": str(self.bundle),
            "serverUrl": self.url,
            "trailingSlash": trailing_slash,
            "privacy": privacy,
            "machineId": f"contract-machine-{marker.lower()}",
            "workdir": str(self.workdir / marker),
            "marker": marker,
            "repoUrl": f"https://example.org/contract/REPO_{marker}.git",
            "votes": 2 if trailing_slash else VOTES,
            "single": not trailing_slash,
            "edits": ["left"] if trailing_slash else ["left", "right", "reject"],
            "modelTags": [arena.TAG],
            "username": f"contract_{marker.lower()[:12]}",
            "metadata": {"jobTitle": "tester", "yearsOfExperience": 7, "industrySector": "research"},
        }
        Path(cfg["workdir"]).mkdir(parents=True)
        config = Path(cfg["workdir"]) / "run.json"
        config.write_text(json.dumps(cfg))
        report = Path(cfg["workdir"]) / "report.json"
        arena.configure_stub(self.stub, marker)
        capture = _Capture()
        root = logging.getLogger()
        root.addHandler(capture)
        started = time.perf_counter()
        try:
            with self.blocker.unblock():
                proc = subprocess.run(
                    [_tool("node"), str(HERE / "driver.js"), "--config", str(config), "--report", str(report)],
                    cwd=HERE,
                    capture_output=True,
                    text=True,
                    timeout=NODE_TIMEOUT,
                )
                dbwork.drain()  # the server's own completion logs are written after it answers
            cache = redis_contents()
        finally:
            root.removeHandler(capture)
        seconds = time.perf_counter() - started
        assert proc.returncode == 0, proc.stderr[-4000:]
        return Run(
            privacy=privacy,
            machine_id=cfg["machineId"],
            marker=marker,
            repo_url=cfg["repoUrl"],
            report=json.loads(report.read_text()),
            server_log=capture.lines.getvalue(),
            redis=cache,
            seconds=seconds,
        )


def redis_contents() -> bytes:
    import redis
    from django.conf import settings

    client = redis.Redis.from_url(settings.REDIS_URL)
    return b"\n".join(k + b"=" + (client.dump(k) or b"") for k in client.scan_iter(count=1000))


@pytest.fixture(scope="module")
def runner(django_db_setup, django_db_blocker, bundle, stub_provider, tmp_path_factory):
    from django.core.management import call_command
    from pytest_django.live_server_helper import LiveServer

    from serving import dbwork
    from serving.selectors import clear_serving_state

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(arena.SECRET_ENV, arena.SECRET)
        with django_db_blocker.unblock():
            arena.seed(stub_provider)
            clear_serving_state()
        server = LiveServer("127.0.0.1")
        try:
            yield Runner(
                url=server.url,
                bundle=bundle,
                stub=stub_provider,
                blocker=django_db_blocker,
                workdir=tmp_path_factory.mktemp("contract"),
            )
        finally:
            server.stop()
            with django_db_blocker.unblock():
                dbwork.shutdown()
                call_command("flush", "--noinput", verbosity=0)
                clear_serving_state()


@pytest.fixture
def database_dump(django_db_blocker):
    """`pg_dump` of the whole test database, as text."""

    def dump() -> str:
        from django.db import connection

        s = connection.settings_dict
        env = {**os.environ, "PGPASSWORD": s.get("PASSWORD") or ""}
        cmd = [_dump_tool(), "--data-only", "--no-owner", "-h", s["HOST"] or "127.0.0.1"]
        cmd += ["-p", str(s["PORT"] or 5432), "-U", s["USER"] or "postgres", s["NAME"]]
        return subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout

    with django_db_blocker.unblock():
        yield dump


def _dump_tool() -> str:
    path = shutil.which("pg_dump")
    if not path:
        pytest.fail("pg_dump not found: install PostgreSQL's client tools (postgresql-client).")
    return path
