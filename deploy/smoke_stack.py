"""The processes of the deployment smoke test: its own nginx, gunicorn pools, worker, beat, stub.

`Stack` starts each as a child process with its output in `logs/`, and stops exactly the
processes it started. `render_nginx` turns the shipped `deploy/nginx.conf` into one that
listens on private ports: every edit must match the shipped text the expected number of
times, so a change there that the test no longer covers fails loudly. Standard library only.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import signal
import socket
import ssl
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

HOST = "arena.test"
NOBODY = 65534  # uid and gid of nobody/nogroup on Debian


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Ports:
    web: int = field(default_factory=free_port)
    pairs: int = field(default_factory=free_port)
    http: int = field(default_factory=free_port)
    https: int = field(default_factory=free_port)
    stub: int = field(default_factory=free_port)


def self_signed_cert(directory: Path) -> tuple[Path, Path]:
    """A throw-away certificate for arena.test and 127.0.0.1 (the client trusts it alone)."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-keyout", str(key), "-out", str(cert), "-subj", f"/CN={HOST}",
         "-addext", f"subjectAltName=DNS:{HOST},IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def _edit(text: str, old: str, new: str, count: int) -> str:
    found = text.count(old)
    if found != count:
        raise SystemExit(
            f"smoke: deploy/nginx.conf has {found} x {old!r}, expected {count}: "
            "update deploy/smoke_stack.py:render_nginx with the config"
        )
    return text.replace(old, new)


def render_nginx(shipped: str, *, ports: Ports, cert: Path, key: Path, logs: Path) -> str:
    """The shipped site config with private ports, the test certificate and our log files."""
    t = shipped
    t = _edit(t, "server 127.0.0.1:8000;", f"server 127.0.0.1:{ports.web};", 1)
    t = _edit(t, "server 127.0.0.1:8001;", f"server 127.0.0.1:{ports.pairs};", 1)
    t = _edit(t, "    listen 80;\n", f"    listen 127.0.0.1:{ports.http};\n", 1)
    t = _edit(t, "    listen [::]:80;\n", "", 1)
    t = _edit(
        t, "    listen 443 ssl http2;\n", f"    listen 127.0.0.1:{ports.https} ssl http2;\n", 1
    )
    t = _edit(t, "    listen [::]:443 ssl http2;\n", "", 1)
    t = _edit(t, "server_name arena.example.org;", f"server_name {HOST};", 2)
    t = _edit(t, "/etc/letsencrypt/live/arena.example.org/fullchain.pem", str(cert), 1)
    t = _edit(t, "/etc/letsencrypt/live/arena.example.org/privkey.pem", str(key), 1)
    t = _edit(t, "/var/log/nginx/arena.access.log", str(logs / "nginx-access.log"), 1)
    t = _edit(t, "/var/log/nginx/arena.error.log", str(logs / "nginx-error.log"), 1)
    active = "\n".join(line for line in t.splitlines() if not line.lstrip().startswith("#"))
    leftover = re.findall(r"arena\.example\.org|/var/log|/etc/letsencrypt", active)
    if leftover:
        raise SystemExit(f"smoke: nginx config still names {sorted(set(leftover))}")
    return t


def nginx_main_conf(prefix: Path, site: Path, logs: Path) -> str:
    """A minimal nginx.conf of our own around the site file (the packaged one binds :80)."""
    tmp = prefix / "tmp"
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (tmp / sub).mkdir(parents=True, exist_ok=True)
        (tmp / sub).chmod(0o777)  # nginx's workers run as nobody when started as root
    return f"""
worker_processes 1;
daemon off;
pid {prefix / "nginx.pid"};
error_log {logs / "nginx-main-error.log"} info;
events {{ worker_connections 256; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    client_body_temp_path {tmp / "body"};
    proxy_temp_path {tmp / "proxy"};
    fastcgi_temp_path {tmp / "fastcgi"};
    uwsgi_temp_path {tmp / "uwsgi"};
    scgi_temp_path {tmp / "scgi"};
    include {site};
}}
"""


class Stack:
    """Child processes of this run, by name; `stop` ends them (and only them)."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.procs: dict[str, subprocess.Popen] = {}
        # False when nobody could not run the venv's interpreter (e.g. one under /root).
        self.may_drop = True

    def start(self, name: str, argv: list[str], *, env: dict, cwd: Path,
              unprivileged: bool = False) -> subprocess.Popen:  # fmt: skip
        """Start `argv`; `unprivileged`: as nobody when we are root, as the site runs in
        production (and as Celery insists, warning otherwise)."""
        out = open(self.logs / f"{name}.out", "wb")  # noqa: SIM115  # closed with the process
        err = open(self.logs / f"{name}.log", "wb")  # noqa: SIM115
        drop = {"user": NOBODY, "group": NOBODY, "extra_groups": []} if (
            unprivileged and os.geteuid() == 0 and self.may_drop
        ) else {}  # fmt: skip
        proc = subprocess.Popen(
            argv, env=env, cwd=cwd, stdout=out, stderr=err, start_new_session=True, **drop
        )
        self.procs[name] = proc
        return proc

    def check_running(self) -> None:
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                tail = (self.logs / f"{name}.log").read_text(errors="replace")[-3000:]
                raise SystemExit(f"smoke: {name} exited with {proc.returncode}:\n{tail}")

    def stop(self) -> None:
        """SIGTERM to each main process (a graceful stop, as systemd's KillMode=mixed does),
        then SIGKILL to whatever is left of its process group after 30 s."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + 30
        for proc in self.procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # leftovers of its own session only
            proc.wait(timeout=10)
        self.procs.clear()  # stopped once: a second stop() touches nothing


def wait_for(what: str, probe, *, timeout: float, stack: Stack | None = None):
    """Poll `probe()` until it returns something truthy; fail with `what` at the deadline."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        if stack is not None:
            stack.check_running()
        try:
            result = probe()
        except (OSError, http.client.HTTPException, ssl.SSLError) as exc:
            result, last = None, exc
        if result:
            return result
        time.sleep(0.25)
    raise SystemExit(f"smoke: {what} not ready within {timeout:.0f} s (last: {last!r})")
