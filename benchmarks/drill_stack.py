"""The private stack the fault drills run on: PostgreSQL, Redis, gunicorn, a Celery worker and beat.

Everything listens on 127.0.0.1 on free ports, in one temporary directory, and is stopped
on exit. PostgreSQL is a fresh cluster (`initdb` from Debian's binaries, run as the
`postgres` user when started as root). The web, worker and beat processes run under a
small supervisor that restarts them when they die, as systemd or compose would
(`Restart=always` / `restart: unless-stopped`); each restart is counted, so a worker that
crashed (issue 12's kombu bug) shows up in the drill's table.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PG_BIN = (
    sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
    if glob.glob("/usr/lib/postgresql/*/bin")
    else ""
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout: float, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except Exception:
            pass
        time.sleep(interval)
    return False


def _as_postgres(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@dataclass
class Postgres:
    base: Path
    port: int = field(default_factory=free_port)

    @property
    def data(self) -> Path:
        return self.base / "pgdata"

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/arena"

    def _ctl(self, *args: str) -> None:
        subprocess.run(
            _as_postgres([f"{PG_BIN}/pg_ctl", "-D", str(self.data), "-w", "-t", "60", *args]),
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def init(self) -> None:
        self.data.mkdir(parents=True)
        if os.geteuid() == 0:
            shutil.chown(self.base, "postgres")
            shutil.chown(self.data, "postgres")
        subprocess.run(
            _as_postgres(
                [
                    f"{PG_BIN}/initdb",
                    "-D",
                    str(self.data),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "-E",
                    "UTF8",
                ]
            ),
            check=True,
            stdout=subprocess.DEVNULL,
        )
        self.start()
        subprocess.run(
            _as_postgres(
                [
                    f"{PG_BIN}/createdb",
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(self.port),
                    "-U",
                    "postgres",
                    "arena",
                ]
            ),
            check=True,
        )

    def start(self) -> None:
        opts = f"-p {self.port} -k {self.base} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        self._ctl("-o", opts, "-l", str(self.base / "pg.log"), "start")

    def stop(self, mode: str = "fast") -> None:
        self._ctl("-m", mode, "stop")

    def restart(self) -> None:
        self.stop("fast")
        self.start()


@dataclass
class Standby:
    """A streaming replica of `primary` (pg_basebackup -R), read-only, on its own port."""

    primary: Postgres
    port: int = field(default_factory=free_port)

    @property
    def data(self) -> Path:
        return self.primary.base / "pgstandby"

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/arena"

    def start(self) -> None:
        subprocess.run(
            _as_postgres(
                [f"{PG_BIN}/pg_basebackup", "-h", "127.0.0.1", "-p", str(self.primary.port),
                 "-U", "postgres", "-D", str(self.data), "-R", "-X", "stream", "-c", "fast"]
            ),
            check=True,
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        # A hot standby needs at least its primary's max_connections.
        opts = (
            f"-p {self.port} -k {self.primary.base} -c listen_addresses=127.0.0.1 "
            "-c max_connections=200"
        )
        log = str(self.primary.base / "standby.log")
        subprocess.run(
            _as_postgres([f"{PG_BIN}/pg_ctl", "-D", str(self.data), "-w", "-t", "60",
                          "-o", opts, "-l", log, "start"]),
            check=True,
            stdout=subprocess.DEVNULL,
        )  # fmt: skip

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            subprocess.run(
                _as_postgres([f"{PG_BIN}/pg_ctl", "-D", str(self.data), "-m", "immediate", "stop"]),
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )


@dataclass
class Redis:
    base: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.base),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(self.answers, 30)

    def answers(self) -> bool:
        out = subprocess.run(
            ["redis-cli", "-p", str(self.port), "ping"], capture_output=True, text=True, timeout=2
        )
        return out.stdout.strip() == "PONG"

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()

    def freeze(self) -> None:
        os.kill(self.proc.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        os.kill(self.proc.pid, signal.SIGCONT)


@dataclass
class Supervised:
    """A process restarted whenever it exits (until the stack stops), restarts counted."""

    name: str
    command: list[str]
    env: dict[str, str]
    log: Path
    proc: subprocess.Popen | None = None
    restarts: int = 0
    crash_lines: list[str] = field(default_factory=list)

    def spawn(self) -> None:
        handle = self.log.open("a")
        self.proc = subprocess.Popen(
            self.command,
            cwd=ROOT,
            env=self.env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill9(self) -> None:
        """kill -9 the whole process group (a worker's pool children too)."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)


class Stack:
    def __init__(self, *, web_workers: int = 3, extra_env: dict[str, str] | None = None) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="arena-drill-"))
        os.chmod(self.base, 0o755)
        self.pg = Postgres(self.base)
        self.redis = Redis(self.base)
        self.web_port = free_port()
        self.web_workers = web_workers
        self.extra_env = extra_env or {}
        self.procs: dict[str, Supervised] = {}
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "DATABASE_URL": self.pg.url,
            "REDIS_URL": self.redis.url,
            "SECRET_KEY": "drill-only-secret",
            "USER_ID_HMAC_KEY": "drill-only-pseudonyms",
            "DEBUG": "0",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            **self.extra_env,
        }

    def manage(self, *args: str) -> str:
        out = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env(),
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout

    def start(self) -> None:
        self.pg.init()
        self.redis.start()
        self.manage("migrate", "--noinput")
        py = sys.executable
        commands = {
            "web": [
                py,
                "-m",
                "gunicorn",
                "arena_site.wsgi",
                "--preload",
                "--bind",
                f"127.0.0.1:{self.web_port}",
                "--workers",
                str(self.web_workers),
                "--timeout",
                "30",
                "--graceful-timeout",
                "5",
            ],
            "worker": [
                py,
                "-m",
                "celery",
                "-A",
                "arena_site",
                "worker",
                "--concurrency=2",
                "--loglevel=INFO",
                "--without-mingle",
                "--without-gossip",
            ],
            "beat": [
                py,
                "-m",
                "celery",
                "-A",
                "arena_site",
                "beat",
                "--loglevel=INFO",
            ],
        }
        for name, command in commands.items():
            proc = Supervised(name, command, self.env(), self.base / f"{name}.log")
            proc.spawn()
            self.procs[name] = proc
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()
        if not wait_until(lambda: self.get("/healthz?check=live")[0] == 200, 120):
            raise RuntimeError(f"gunicorn did not start; see {self.base / 'web.log'}")

    def _watch(self) -> None:
        while not self._stop.wait(0.5):
            for proc in self.procs.values():
                if (
                    proc.proc is not None
                    and proc.proc.poll() is not None
                    and not self._stop.is_set()
                ):
                    proc.restarts += 1
                    proc.spawn()

    def get(self, path: str, timeout: float = 5.0) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(self.url + path, timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def gunicorn_workers(self) -> list[int]:
        master = self.procs["web"].proc.pid
        out = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True)
        return [int(p) for p in out.stdout.split()]

    def stop(self) -> None:
        self._stop.set()
        for proc in self.procs.values():
            proc.stop()
        if self.redis.proc is not None and self.redis.proc.poll() is None:
            self.redis.thaw()  # a frozen process cannot act on SIGKILL's cleanup otherwise
        self.redis.kill()
        with contextlib.suppress(subprocess.CalledProcessError):
            self.pg.stop("immediate")
        shutil.rmtree(self.base, ignore_errors=True)
