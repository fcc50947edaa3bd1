"""Run one untrusted Python program (a model's code plus its tests) in a throw-away child process.

``run_python(source)`` starts ``evaluations/_launcher.py`` in a fresh interpreter
(``python -I -S``: no site-packages, no environment variables, no user site) and returns a
`SandboxResult`; nothing of the program is imported into the calling process. Per run:

* **limits** (`Limits`, ``setrlimit`` in the child): CPU seconds, address space (memory),
  size of any file written (stdout and stderr included), number of processes, open files;
  the wall clock is enforced here by killing the child.
* **isolation** (`SandboxConfig.isolation`, ``"auto"`` picks the strongest that works):
  ``"namespaces"`` (running as root) runs the launcher under ``unshare --net --pid --mount --ipc
  --uts``: no network but a down loopback, its own PID space (everything the program started dies
  with it), and a new root file system holding only read-only system and interpreter
  directories plus a size-limited writable ``/work`` tmpfs; the program runs as an
  unprivileged uid (``nobody`` by default) with ``no_new_privs``. ``"user-namespaces"`` (not
  root) is the same inside ``unshare --user --map-root-user``, without the uid change.
  ``"none"`` is the fallback when the kernel refuses namespaces: limits, a uid drop when root,
  a private temporary directory and a scrubbed environment, but **the network is reachable and
  the host's files are as visible as the uid allows**; `SandboxResult.limitations` says so on
  every such result.
* **work directory**: a fresh ``tempfile.mkdtemp`` per run, removed afterwards.

The status is one of `Status`; the program passes only if it ran to its end without an
exception and without calling ``exit``. A deliberately adversarial program can still fake a
pass (for example with ``os._exit(0)``): the sandbox protects the host, not the score.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Literal

from . import _launcher as codes

LAUNCHER = Path(__file__).with_name("_launcher.py")
NOBODY = 65534
Isolation = Literal["auto", "namespaces", "user-namespaces", "none"]

_UNSHARE = ("--net", "--pid", "--fork", "--kill-child", "--mount", "--ipc", "--uts")
_UNSHARE_USER = ("--user", "--map-root-user")
# The modules HumanEval's prompts, solutions and tests import (plus a few common ones), loaded
# before the uid drop when the uid cannot read the standard library itself ("none" mode with
# an interpreter under /root, as pyenv installs it): then these at least can be imported.
_PRELOAD = (
    "typing",
    "math",
    "re",
    "collections",
    "itertools",
    "functools",
    "heapq",
    "string",
    "random",
    "hashlib",
    "copy",
)
_GRACE_SECONDS = 5.0
_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"  # an exception (a failed assert included) or a call to exit()
    TIMEOUT = "timeout"  # CPU or wall-clock limit
    MEMORY = "memory"  # allocation refused by the address-space limit
    FILE_SIZE = "file_size"  # a write past the file-size limit
    CRASHED = "crashed"  # killed by a signal (segfault, ...)
    ERROR = "error"  # the sandbox itself could not run the program


@dataclass(frozen=True)
class Limits:
    """Per-run resource limits. ``disk_bytes`` bounds the ``/work`` tmpfs (namespaces only)."""

    cpu_seconds: int = 10
    wall_seconds: float = 20.0
    memory_bytes: int = 1 << 30
    file_size_bytes: int = 4 << 20
    max_processes: int = 32
    max_open_files: int = 64
    disk_bytes: int = 32 << 20
    output_tail_bytes: int = 4096


@dataclass(frozen=True)
class SandboxConfig:
    """How to isolate. ``uid``/``gid``: who the program runs as when the caller is root
    (``None``: ``nobody``); ignored otherwise. ``python``: the interpreter for the child."""

    isolation: Isolation = "auto"
    python: str = sys.executable
    uid: int | None = None
    gid: int | None = None


DEFAULT_LIMITS = Limits()
DEFAULT_CONFIG = SandboxConfig()


@dataclass(frozen=True)
class SandboxResult:
    status: Status
    returncode: int | None
    stdout: str  # the last Limits.output_tail_bytes, decoded leniently
    stderr: str
    duration_s: float
    isolation: str
    limitations: tuple[str, ...] = ()
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED


@dataclass(frozen=True)
class IsolationReport:
    """What ``"auto"`` resolved to on this machine, and what that leaves open."""

    mode: Literal["namespaces", "user-namespaces", "none"]
    limitations: tuple[str, ...] = field(default_factory=tuple)


_probe_lock = threading.Lock()
_probed: dict[tuple[str, str], IsolationReport] = {}

_NONE_LIMITATIONS = (
    "network not isolated (no network namespace)",
    "host files visible to the sandbox uid (no mount namespace)",
    "processes that leave the process group survive the run (no PID namespace)",
)


def _is_root() -> bool:
    return os.geteuid() == 0


@functools.lru_cache(maxsize=16)
def _stdlib_hidden(config: SandboxConfig) -> tuple[str, ...]:
    """In "none" mode as root: is our standard library out of the sandbox uid's reach?"""
    if not _is_root() or config.python != sys.executable:
        return ()
    stdlib = Path(os.__file__).resolve().parent
    for folder in (stdlib, *stdlib.parents):
        if not folder.stat().st_mode & stat.S_IXOTH:
            return (
                f"the sandbox uid cannot read {stdlib} ({folder} is closed to others): only the "
                f"preloaded modules can be imported ({', '.join(_PRELOAD)})",
            )
    return ()


def isolation_report(config: SandboxConfig = DEFAULT_CONFIG) -> IsolationReport:
    """Resolve ``config.isolation`` (probing the kernel once per interpreter and mode)."""
    if config.isolation == "none":
        return IsolationReport("none", (*_NONE_LIMITATIONS, *_stdlib_hidden(config)))
    wanted = config.isolation
    if wanted == "auto":
        wanted = "namespaces" if _is_root() else "user-namespaces"
    key = (config.python, wanted)
    with _probe_lock:
        if key not in _probed:
            _probed[key] = _probe(replace(config, isolation=wanted))
        report = _probed[key]
    if config.isolation != "auto" and report.mode != config.isolation:
        raise RuntimeError(f"isolation {config.isolation!r} is not available: {report}")
    return report


def _probe(config: SandboxConfig) -> IsolationReport:
    mode = config.isolation
    assert mode in ("namespaces", "user-namespaces")
    if shutil.which("unshare") is None:
        why = "unshare(1) not installed"
    else:
        probe = _run("print('sandbox ok')\n", Limits(), config, mode, ())
        if probe.status is Status.PASSED and probe.stdout.strip() == "sandbox ok":
            return IsolationReport(mode)
        why = f"unshare {mode} failed: {probe.stderr.strip()[-300:] or probe.detail}"
    return IsolationReport("none", (why, *_NONE_LIMITATIONS, *_stdlib_hidden(config)))


def _command(python: str, job: str, mode: str) -> list[str]:
    launcher = [python, "-I", "-S", str(LAUNCHER), job]
    if mode == "none":
        return launcher
    flags = (*_UNSHARE_USER, *_UNSHARE) if mode == "user-namespaces" else _UNSHARE
    return ["unshare", *flags, "--", *launcher]


def _tail(path: Path, size: int) -> str:
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        handle.seek(max(0, handle.tell() - size))
        return handle.read().decode("utf-8", errors="replace")


def _kill_group(pgid: int | None) -> None:
    if pgid is None or pgid <= 1:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _worker_group(job: Path) -> int | None:
    """The program's process group, which the launcher records (its own differs)."""
    try:
        return int((job / "worker.pid").read_text())
    except (OSError, ValueError):
        return None


_STATUS_OF_EXIT = {
    codes.EXIT_OK: (Status.PASSED, ""),
    codes.EXIT_EXCEPTION: (Status.FAILED, "exception"),
    codes.EXIT_CALLED_EXIT: (Status.FAILED, "the program called exit()"),
    codes.EXIT_MEMORY: (Status.MEMORY, "MemoryError"),
    codes.EXIT_FILE_SIZE: (Status.FILE_SIZE, "file size limit"),
    codes.EXIT_CPU: (Status.TIMEOUT, "CPU time limit"),
    codes.EXIT_SETUP: (Status.ERROR, "sandbox setup failed"),
    codes.EXIT_TERMINATED: (Status.TIMEOUT, "wall-clock limit"),
}


def _status(returncode: int) -> tuple[Status, str]:
    if returncode in _STATUS_OF_EXIT:
        return _STATUS_OF_EXIT[returncode]
    if returncode > codes.EXIT_SIGNAL_BASE or returncode < 0:
        number = returncode - codes.EXIT_SIGNAL_BASE if returncode > 0 else -returncode
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = str(number)
        return Status.CRASHED, f"killed by {name}"
    return Status.FAILED, f"exit status {returncode}"


def _ids(config: SandboxConfig, mode: str) -> tuple[int | None, int | None]:
    if mode == "user-namespaces" or not _is_root():
        return None, None
    uid = NOBODY if config.uid is None else config.uid
    return uid, (uid if config.gid is None else config.gid)


def _run(
    source: str,
    limits: Limits,
    config: SandboxConfig,
    mode: str,
    limitations: tuple[str, ...],
) -> SandboxResult:
    uid, gid = _ids(config, mode)
    # Only where the uid could not import them itself: each preloaded module costs every run.
    preload = mode == "none" and uid is not None and bool(_stdlib_hidden(config))
    job = Path(tempfile.mkdtemp(prefix="arena-sandbox-"))
    started = time.perf_counter()
    try:
        # 0711: the sandbox uid may pass through to work/ (fallback mode) but not list or read.
        job.chmod(0o711)
        # A lone surrogate (JSON can carry one) cannot be UTF-8: it becomes "?", and the
        # program runs (and most likely fails) like any other.
        (job / "program.py").write_text(source, encoding="utf-8", errors="replace")
        (job / "program.py").chmod(0o644)
        lines = [f"limits.{key}={value!r}" for key, value in asdict(limits).items()]
        lines += [
            f"uid={'' if uid is None else uid}",
            f"gid={'' if gid is None else gid}",
            f"fs={'none' if mode == 'none' else 'pivot'}",
            f"preload={','.join(_PRELOAD) if preload else ''}",
        ]
        (job / "config").write_text("\n".join(lines) + "\n", encoding="utf-8")
        if mode == "none":
            (job / "work").mkdir(mode=0o700)
            if uid is not None:
                os.chown(job / "work", uid, gid if gid is not None else uid)
        out_path, err_path = job / "stdout", job / "stderr"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(
                _command(config.python, str(job), mode),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=dict(_ENV),
                cwd=job,
                close_fds=True,
                start_new_session=True,
            )
            detail = ""
            try:
                returncode: int | None = proc.wait(timeout=limits.wall_seconds)
            except subprocess.TimeoutExpired:
                returncode = None
                if mode == "none":
                    # The launcher kills and reaps everything the program started.
                    proc.terminate()
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(timeout=_GRACE_SECONDS)
                # Under unshare (which ignores SIGTERM) killing it kills the namespace's
                # PID 1 (--kill-child) and with it every process of the namespace.
            finally:
                if proc.poll() is None:
                    # Not reaped yet, so its process group id cannot have been reused.
                    _kill_group(proc.pid)
                    _kill_group(_worker_group(job))
                    proc.kill()
                final = proc.wait()
        duration = time.perf_counter() - started
        if returncode is None:
            status, detail = Status.TIMEOUT, f"wall-clock limit ({limits.wall_seconds:g} s)"
            returncode = final
        else:
            status, detail = _status(returncode)
        return SandboxResult(
            status=status,
            returncode=returncode,
            stdout=_tail(out_path, limits.output_tail_bytes),
            stderr=_tail(err_path, limits.output_tail_bytes),
            duration_s=duration,
            isolation=mode,
            limitations=limitations,
            detail=detail,
        )
    except OSError as exc:
        return SandboxResult(
            status=Status.ERROR,
            returncode=None,
            stdout="",
            stderr="",
            duration_s=time.perf_counter() - started,
            isolation=mode,
            limitations=limitations,
            detail=f"could not start the sandbox: {exc}",
        )
    finally:
        shutil.rmtree(job, ignore_errors=True)


def run_python(
    source: str, *, limits: Limits = DEFAULT_LIMITS, config: SandboxConfig = DEFAULT_CONFIG
) -> SandboxResult:
    """Run ``source`` as ``__main__`` in a new sandboxed process and report how it ended."""
    report = isolation_report(config)
    return _run(source, limits, config, report.mode, report.limitations)
