"""Fixtures of the extension contract test: the bundle, a live server with stub providers, runs.

The server is gunicorn, as deployed (threaded workers, ``--preload``), on the test database,
for the whole module; the stub provider runs in this process. Python's own http.server (under
Django's LiveServerThread) rewrites a leading ``//`` in request paths, which would hide what a
trailing-slash ``arena.serverUrl`` does to a real deployment, hence a real server. The driver
runs the extension in a Node process against it, then the tests read what was stored. One
driver run per privacy setting, started by the first test that needs it; the database is
flushed when the module ends. Each run has its own machine id and its own marker in every piece
of code it types, so one run's code can be looked for everywhere (database dump, Redis, the
server's log) without confusing it with another's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
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
        pytest.fail(
            f"`{name}` not found: the contract test needs Node.js 18+ and npm (.ci/run installs them)."
        )
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


class Runner:
    """Runs the driver once per (privacy, trailing slash) and keeps the result."""

    def __init__(self, *, server, bundle, stub, blocker, workdir) -> None:
        self.server, self.bundle, self.stub = server, bundle, stub
        self.blocker, self.workdir = blocker, workdir
        self.done: dict[tuple[str, bool], Run] = {}

    def get(self, privacy: str, *, trailing_slash: bool = False) -> Run:
        key = (privacy, trailing_slash)
        if key not in self.done:
            self.done[key] = self._run(privacy, trailing_slash)
        return self.done[key]

    def _run(self, privacy: str, trailing_slash: bool) -> Run:
        marker = f"{privacy.upper()}{uuid.uuid4().hex[:10]}"
        cfg = {
            "bundle": str(self.bundle),
            "serverUrl": self.server.url,
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
            "metadata": {
                "jobTitle": "tester",
                "yearsOfExperience": 7,
                "industrySector": "research",
            },
        }
        Path(cfg["workdir"]).mkdir(parents=True)
        config = Path(cfg["workdir"]) / "run.json"
        config.write_text(json.dumps(cfg))
        report = Path(cfg["workdir"]) / "report.json"
        arena.configure_stub(self.stub, marker)
        log_start = self.server.log.stat().st_size
        started = time.perf_counter()
        proc = subprocess.run(
            [
                _tool("node"),
                str(HERE / "driver.js"),
                "--config",
                str(config),
                "--report",
                str(report),
            ],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=NODE_TIMEOUT,
        )
        seconds = time.perf_counter() - started
        assert proc.returncode == 0, proc.stderr[-4000:]
        run = Run(
            privacy=privacy,
            machine_id=cfg["machineId"],
            marker=marker,
            repo_url=cfg["repoUrl"],
            report=json.loads(report.read_text()),
            server_log="",
            redis=b"",
            seconds=seconds,
        )
        with self.blocker.unblock():
            _wait_for_served_logs(run)
        run.redis = redis_contents()
        with self.server.log.open("rb") as f:
            f.seek(log_start)
            run.server_log = f.read().decode("utf-8", "replace")
        return run


def _wait_for_served_logs(run: Run, timeout: float = 60.0) -> None:
    """The server writes its own completion logs after answering: wait for every one."""
    from ingest.models import CompletionLog

    ids = {item["completionId"] for pair in run.pairs for item in pair["completionItems"]}
    deadline = time.monotonic() + timeout
    while CompletionLog.objects.filter(completion_id__in=ids).count() < len(ids):
        if time.monotonic() > deadline:
            return  # the test on the logs says what is missing
        time.sleep(0.05)


@dataclass
class Server:
    url: str
    log: Path
    process: subprocess.Popen


def _start_gunicorn(workdir: Path) -> Server:
    from django.conf import settings
    from django.db import connection

    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD'] or ''}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "SECRET_KEY": settings.SECRET_KEY,
        "USER_ID_HMAC_KEY": settings.USER_ID_HMAC_KEY,
        "DEBUG": "0",
        "RECOMPUTE_ON_VOTES": "0",
        arena.SECRET_ENV: arena.SECRET,
    }
    log = workdir / "gunicorn.log"
    cmd = [
        sys.executable,
        "-m",
        "gunicorn",
        "arena_site.wsgi",
        "--preload",
        "--bind",
        "127.0.0.1:0",
    ]
    cmd += [
        "--workers",
        "2",
        "--worker-class",
        "gthread",
        "--threads",
        "16",
        "--access-logfile",
        "-",
    ]
    if "--no-control-socket" in _gunicorn_help():
        cmd.append("--no-control-socket")  # gunicorn 27 otherwise shares one socket in ~/.gunicorn
    with log.open("wb") as out:
        process = subprocess.Popen(
            cmd, cwd=HERE.parent.parent, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + 60
    url = None
    while url is None:
        found = re.search(rb"Listening at: (http://127\.0\.0\.1:\d+)", log.read_bytes())
        if found:
            url = found.group(1).decode()
        elif process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"gunicorn did not start:\n{log.read_text()[-3000:]}")
        else:
            time.sleep(0.05)
    while True:
        try:
            with urllib.request.urlopen(url + "/list_models", timeout=5) as response:
                if response.status == 200:
                    return Server(url=url, log=log, process=process)
        except OSError:
            if time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"gunicorn does not answer:\n{log.read_text()[-3000:]}")
            time.sleep(0.05)


def _gunicorn_help() -> str:
    return subprocess.run(
        [sys.executable, "-m", "gunicorn", "--help"], capture_output=True, text=True, check=True
    ).stdout


def redis_contents() -> bytes:
    import redis
    from django.conf import settings

    client = redis.Redis.from_url(settings.REDIS_URL)
    return b"\n".join(k + b"=" + (client.dump(k) or b"") for k in client.scan_iter(count=1000))


@pytest.fixture(scope="module")
def runner(django_db_setup, django_db_blocker, bundle, stub_provider, tmp_path_factory):
    from django.core.management import call_command

    workdir = tmp_path_factory.mktemp("contract")
    with django_db_blocker.unblock():
        arena.seed(stub_provider)
        server = _start_gunicorn(workdir)
    try:
        yield Runner(
            server=server,
            bundle=bundle,
            stub=stub_provider,
            blocker=django_db_blocker,
            workdir=workdir,
        )
    finally:
        server.process.terminate()
        server.process.wait(30)
        with django_db_blocker.unblock():
            call_command("flush", "--noinput", verbosity=0)


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
