"""Plumbing the benchmark scripts share: the measured tree, databases, servers, wrk, CPU, reports.

The scripts run as ``.venv/bin/python benchmarks/<script>.py``, so this module is imported as
``common``. Everything here is about running a measurement, never about what is measured.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import http.client
import importlib.metadata
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "performance.md"
PG_HOST, PG_PORT, PG_USER = "127.0.0.1", 5432, "postgres"
# A line in a section of DOC from which on hand-written notes survive a rewrite of the figures.
KEEP_MARKER = re.compile(r"<!-- .*the text below this line is kept when figures are rewritten -->")


def log(msg: str) -> None:
    print(f"[{dt.datetime.now():%H:%M:%S}] {msg}", flush=True)


def venv_python() -> str:
    candidate = ROOT / ".venv" / "bin" / "python"
    return str(candidate) if candidate.exists() else sys.executable


def snapshot_tree(ref: str, *, prefix: str) -> tuple[Path, str]:
    """Export `ref` with `git archive` into a new temporary directory; returns it and the
    short commit. Measuring a commit, not the working tree, keeps half-finished edits out."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", f"{ref}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    dest = Path(tempfile.mkdtemp(prefix=f"{prefix}_{commit}_"))
    archive = subprocess.Popen(["git", "-C", str(ROOT), "archive", ref], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise SystemExit(f"git archive {ref} failed")
    return dest, commit


# --- PostgreSQL, Redis, Django --------------------------------------------------------------


def add_service_options(parser: argparse.ArgumentParser, *, db: str, redis_db: int) -> None:
    """--db and --redis-url, so runs sharing a machine can keep to their own databases."""
    parser.add_argument("--db", default=db, help="PostgreSQL database the run re-creates")
    parser.add_argument(
        "--redis-url",
        default=f"redis://127.0.0.1:6379/{redis_db}",
        help="Redis database for the server's cache (flushed)",
    )


def pg_url(db: str) -> str:
    return f"postgres://{PG_USER}@{PG_HOST}:{PG_PORT}/{db}"


def psql(db: str, sql: str) -> str:
    cmd = ["psql", "-h", PG_HOST, "-p", str(PG_PORT), "-U", PG_USER, "-d", db, "-XAtqc", sql]
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


def recreate_database(db: str) -> None:
    psql("postgres", f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
    psql("postgres", f'CREATE DATABASE "{db}"')


def drop_database(db: str) -> None:
    with contextlib.suppress(subprocess.CalledProcessError):
        psql("postgres", f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


def flush_redis(url: str) -> None:
    import redis

    redis.Redis.from_url(url).flushdb()


def django_env(db: str, redis_url: str, src: Path = ROOT, **extra: str) -> dict[str, str]:
    """The environment of a server or manage.py run from `src` against `db`."""
    return {
        **os.environ,
        "DATABASE_URL": pg_url(db),
        "REDIS_URL": redis_url,
        "SECRET_KEY": "bench",
        "USER_ID_HMAC_KEY": "bench",
        "DEBUG": "0",
        "LOG_LEVEL": "WARNING",
        "DJANGO_SETTINGS_MODULE": "arena_site.settings",
        "PYTHONUNBUFFERED": "1",
        # Import the benchmarked tree, not the editable install's checkout.
        "PYTHONPATH": str(src),
        **extra,
    }


def manage(*args: str, env: dict[str, str], src: Path = ROOT) -> str:
    """`manage.py args` in `src`; its output, or SystemExit with its error output."""
    cmd = [venv_python(), "manage.py", *args]
    out = subprocess.run(cmd, cwd=src, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{out.stderr[-3000:]}")
    return out.stdout


# --- processes and servers ------------------------------------------------------------------

# Processes we started; stop_all() ends them whatever happens.
_children: list[subprocess.Popen[bytes]] = []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_process(
    cmd: Sequence[str], *, env: dict[str, str], cwd: Path, log_path: Path
) -> subprocess.Popen[bytes]:
    """Start `cmd` in a session of its own (so stopping it ends its workers, and only them)."""
    with open(log_path, "w") as out:
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    _children.append(proc)
    return proc


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    with contextlib.suppress(ValueError):
        _children.remove(proc)


@contextlib.contextmanager
def celery_worker(env: dict[str, str], queue: str, *, log_prefix: str) -> Iterator[None]:
    """A `celery worker --pool=solo` on `queue` while the block runs (taking slice fits,
    leaderboard/fanout.py); it logs to a temporary file, waited on for "ready." (180 s)."""
    logfile = Path(tempfile.mkstemp(prefix=log_prefix, suffix=".log")[1])
    with logfile.open("w") as handle:
        worker = subprocess.Popen(
            [venv_python(), "-m", "celery", "-A", "arena_site", "worker", "--pool=solo",
             "-Q", queue, "--loglevel=INFO"],
            cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            deadline = time.time() + 180
            while "ready." not in logfile.read_text() and time.time() < deadline:
                time.sleep(0.5)
            yield
        finally:
            worker.terminate()
            worker.wait(30)


def stop_all() -> None:
    for proc in list(_children):
        with contextlib.suppress(Exception):
            stop_process(proc)


def _answers(target: int | str, timeout: float) -> bool:
    try:
        if isinstance(target, int):
            with socket.create_connection(("127.0.0.1", target), 0.5):
                return True
        with urllib.request.urlopen(target, timeout=timeout) as r:
            return bool(r.status == 200)
    except (OSError, http.client.HTTPException):  # URLError is an OSError
        return False


def wait_until_up(
    target: int | str,
    *,
    proc: subprocess.Popen[bytes] | None = None,
    log_path: Path | None = None,
    timeout: float = 60.0,
) -> None:
    """Wait until a loopback port (int) accepts connections or a URL (str) answers 200;
    fail at once if `proc`, the server, exits meanwhile (showing the end of its log).

    A worker's first request imports the whole app (over 10 s on a busy shared machine), so
    one request may take all the time left rather than be abandoned and sent again."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        if proc is not None and proc.poll() is not None:
            tail = log_path.read_text()[-3000:] if log_path else ""
            raise SystemExit(f"{proc.args!r} exited ({proc.returncode}); see {log_path}:\n{tail}")
        if _answers(target, max(left, 1.0)):
            return
        time.sleep(0.2)
    raise SystemExit(f"{target} did not answer within {timeout:g} s")


@dataclass(frozen=True)
class GunicornConfig:
    """``sync:4`` = 4 sync workers, ``gthread:2x8`` = 2 workers of 8 threads."""

    worker_class: str  # sync | gthread
    workers: int
    threads: int = 1

    @classmethod
    def parse(cls, text: str) -> GunicornConfig:
        kind, _, rest = text.strip().partition(":")
        if kind == "sync":
            return cls("sync", int(rest or 4))
        if kind == "gthread":
            workers, _, threads = (rest or "2x8").partition("x")
            return cls("gthread", int(workers), int(threads or 8))
        raise argparse.ArgumentTypeError(f"bad config {text!r}: use sync:N or gthread:WxT")

    @property
    def label(self) -> str:
        if self.worker_class == "sync":
            return f"sync, {self.workers} workers"
        return f"gthread, {self.workers} workers x {self.threads} threads"

    def args(self) -> list[str]:
        a = ["--workers", str(self.workers), "--worker-class", self.worker_class]
        if self.worker_class == "gthread":
            a += ["--threads", str(self.threads)]
        return a


def start_gunicorn(
    config: GunicornConfig,
    *,
    src: Path,
    env: dict[str, str],
    log_path: Path,
    extra: Sequence[str] = (),
) -> tuple[subprocess.Popen[bytes], str]:
    """gunicorn serving `src` on a free loopback port, once /healthz answers; (process, URL)."""
    port = free_port()
    cmd = [
        venv_python(), "-m", "gunicorn", "arena_site.wsgi", "--chdir", str(src),
        "--bind", f"127.0.0.1:{port}", *config.args(), "--backlog", "2048", *extra,
    ]  # fmt: skip
    proc = start_process(cmd, env=env, cwd=src, log_path=log_path)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/healthz?check=live", proc=proc, log_path=log_path, timeout=180)
    except BaseException:
        stop_process(proc)
        raise
    return proc, url


# --- CPU accounting (/proc) -----------------------------------------------------------------

CLK_TCK = os.sysconf("SC_CLK_TCK")


def child_pids(pid: int) -> list[int]:
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(x) for x in f.read().split()]
    return out


def proc_cpu(pid: int) -> tuple[tuple[int, int], float]:
    """((pid, start time), CPU seconds): the start time tells a reused pid apart."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (pid, int(fields[19])), (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return (pid, -1), 0.0


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of a process and its live children (a server and its workers)."""
    return sum(proc_cpu(p)[1] for p in [pid, *child_pids(pid)])


def named_pids(names: set[str]) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/comm") as f:
                if f.read().strip() in names:
                    pids.append(int(entry))
        except OSError:
            continue
    return pids


def total_cpu() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine."""
    with open("/proc/stat") as f:
        values = [int(x) for x in f.readline().split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


def wait_for_quiet(max_busy_cores: float, timeout: float) -> float:
    """Wait until the machine is idle but for us (other users' test suites share it).

    Samples 2 s at a time while our servers are idle; returns the busy cores last seen.
    """
    ncpu = os.cpu_count() or 1
    deadline = time.monotonic() + timeout
    warned = False
    while True:
        b0, t0 = total_cpu()
        time.sleep(2.0)
        b1, t1 = total_cpu()
        busy = ncpu * (b1 - b0) / max(1, t1 - t0)
        if busy <= max_busy_cores or time.monotonic() > deadline:
            if busy > max_busy_cores:
                log(f"  machine still busy ({busy:.2f} cores used by others); running anyway")
            return busy
        if not warned:
            log(f"  machine busy ({busy:.2f} cores used by others); waiting up to {timeout:g} s")
            warned = True


# --- wrk ------------------------------------------------------------------------------------


def run_wrk(
    url: str,
    *,
    connections: int,
    seconds: float,
    threads: int = 2,
    timeout: str | None = None,
    script: Path | None = None,
    script_args: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> str:
    """wrk's report (with the latency distribution) of one closed-loop run."""
    cmd = ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{seconds:g}s", "--latency"]
    cmd += ["--timeout", timeout] if timeout else []
    cmd += ["-s", str(script)] if script else []
    cmd += [url, "--", *script_args] if script_args else [url]
    out = subprocess.run(
        cmd, env=env, capture_output=True, text=True, check=False, timeout=seconds + 120
    )
    if out.returncode != 0:
        raise RuntimeError(f"wrk failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
    return out.stdout


def parse_wrk(text: str) -> dict[str, Any]:
    """Requests, rate, errors and latency quantiles (seconds) from wrk's standard report."""

    def seconds(value: str, unit: str) -> float:
        return float(value) * {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}[unit]

    out: dict[str, Any] = {}
    for q in ("50", "75", "90", "99"):
        m = re.search(rf"^\s+{q}%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M)
        out[f"p{q}_s"] = seconds(*m.groups()) if m else None
    m = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m)", text)
    if not m:
        raise RuntimeError(f"no request count in wrk's report:\n{text}")
    out["requests"] = int(m.group(1))
    out["seconds"] = seconds(m.group(2), m.group(3))
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    out["non_2xx"] = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    out["socket_errors"] = sum(int(x) for x in m.groups()) if m else 0
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    out["rps"] = float(m.group(1)) if m else 0.0
    return out


# --- reports --------------------------------------------------------------------------------


def machine_info(packages: dict[str, str] | None = None) -> dict[str, Any]:
    """Where and when a run happened; `packages` maps a label to a distribution name."""
    cpu = platform.processor() or "unknown CPU"
    with contextlib.suppress(OSError):
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        cpu = next(
            (
                ln.split(":", 1)[1].strip()
                for ln in lscpu.splitlines()
                if ln.startswith("Model name")
            ),
            cpu,
        )
    mem_kb = 0
    with contextlib.suppress(OSError), open("/proc/meminfo") as f:
        mem_kb = next((int(line.split()[1]) for line in f if line.startswith("MemTotal")), 0)
    versions = {}
    for label, dist in (packages or {}).items():
        try:
            versions[label] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            versions[label] = "?"
    now = dt.datetime.now(dt.UTC)
    return {
        "date": now.strftime("%Y-%m-%d %H:%M UTC"),
        "day": now.date().isoformat(),
        "cpu": cpu,
        "nproc": str(os.cpu_count()),
        "memory_gb": round(mem_kb / 1024 / 1024, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "packages": versions,
    }


def machine_line(info: dict[str, Any]) -> str:
    """'AMD EPYC, nproc 2, Python 3.11.7, numpy 1.26.4' (the packages asked for)."""
    packages = "".join(f", {label} {v}" for label, v in info["packages"].items())
    return f"{info['cpu']}, nproc {info['nproc']}, Python {info['python']}{packages}"


def write_section(text: str, doc: Path = DOC) -> None:
    """Replace (or append) one benchmark's section of `doc`: the one headed by text's first
    line, up to the next "## " heading. Others write the other sections.

    Hand-written notes in the old section, from a KEEP_MARKER line on, survive a rewrite.
    """
    heading = text.split("\n", 1)[0].rstrip()
    current = doc.read_text(encoding="utf-8") if doc.exists() else "# Performance\n"
    lines = current.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == heading), None)
    body = text.rstrip("\n") + "\n"
    if start is None:
        new = current.rstrip("\n") + "\n\n" + body
    else:
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines)
        )
        old = lines[start:end]
        marker = next(
            (i for i, line in enumerate(old) if KEEP_MARKER.fullmatch(line.rstrip())), None
        )
        if marker is not None:
            body += "\n" + "".join(old[marker:]).rstrip("\n") + "\n"
        tail = "".join(lines[end:])
        new = "".join(lines[:start]) + body + ("\n" + tail if tail else "")
    # Re-read right before writing: if someone changed the file meanwhile, start again.
    if (doc.read_text(encoding="utf-8") if doc.exists() else "# Performance\n") != current:
        write_section(text, doc)
        return
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(new, encoding="utf-8")
