"""Run one untrusted Python program (a model's code plus its tests) under bubblewrap.

``run_python(source)`` runs ``evaluations/_launcher.py`` in a fresh ``python -I -S`` inside
Debian's ``bwrap`` and returns a `SandboxResult`; nothing of the program is imported here.
bubblewrap does the isolation; this module chooses what the sandbox sees (docs/evaluations.md,
"The sandbox"): new user, PID, network, IPC, UTS and cgroup namespaces; a read-only root of
``/usr`` and the interpreter's prefix with every site-packages hidden (the project lives
there); a minimal ``/dev``; a size-limited ``/work``; no ``/etc``, ``/tmp``, ``/proc`` or
project. As root, ``bwrap`` runs as ``nobody`` (root ignores the process limit), given
``/usr`` and the interpreter as descriptors opened before the switch. The launcher sets the
limits inside the run's own user namespace, so one run's fork bomb cannot starve another's
processes; the wall clock is enforced here by killing ``bwrap`` (``--die-with-parent``).

`SandboxConfig.isolation`: ``"bwrap"`` (the default) raises `IsolationUnavailable` naming the
opt-out when bubblewrap is missing or refused; ``"none"`` is that explicit opt-out (limits and
a private directory only; every result lists what is left open).

The program passes only if it ran to its end without an exception and without calling
``exit``. An adversarial program can still fake a pass (``os._exit(0)``): the sandbox
protects the host, not the score.
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
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, Literal

from . import _launcher as codes

LAUNCHER = Path(__file__).with_name("_launcher.py")
NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"
SETTING = "EVALUATION_SANDBOX_ISOLATION"
Isolation = Literal["bwrap", "none"]

_WORK = "/work"
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
_NONE_LIMITATIONS = (
    f"isolation turned off ({SETTING}=none)",
    "network not isolated",
    "host files readable and writable as far as the sandbox uid allows",
    "host processes visible; processes the program detaches survive the run",
    "the process limit is shared by all runs under the same uid",
)


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
    """Per-run resource limits. ``disk_bytes`` bounds the ``/work`` tmpfs (bwrap only)."""

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
    """How to isolate. ``uid``/``gid``: who runs ``bwrap`` when the caller is root (``None``:
    ``nobody``); ignored otherwise. ``bwrap``: the bubblewrap binary."""

    isolation: Isolation = "bwrap"
    uid: int | None = None
    gid: int | None = None
    bwrap: str = "bwrap"


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

    def outcome(self) -> dict[str, Any]:
        """What a scored answer (``ScoredAnswer``) records of this run."""
        return {
            "status": self.status.value,
            "duration_s": self.duration_s,
            "error": self.detail or None,
        }


@dataclass(frozen=True)
class ScoredAnswer:
    """One answer of an evaluation: its task, how its run ended (a ``Status`` value or the
    suite's own, such as a provider error) and what the model sent."""

    task_id: str
    status: str
    raw_output: str | None

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass(frozen=True)
class IsolationReport:
    """What the configured isolation gives on this machine: ``available`` False means runs
    are refused, ``why`` says what failed."""

    mode: Isolation
    available: bool
    limitations: tuple[str, ...] = ()
    why: str = ""


class IsolationUnavailable(RuntimeError):
    """The sandbox cannot isolate here, and the operator has not opted out."""


def refusal(why: str) -> str:
    """The error of a run refused for want of isolation: what failed and the opt-out."""
    return (
        f"no sandbox isolation on this machine ({why}); untrusted programs are not run. "
        "Install Debian's bubblewrap (bwrap) and allow user namespaces (docs/evaluations.md), "
        f"or set {SETTING}=none to run them without isolation (explicit opt-out)"
    )


@functools.cache
def _launcher_source() -> str:
    return LAUNCHER.read_text(encoding="utf-8")


def _open_to_others(path: str) -> bool:
    """Can a uid other than the owner reach ``path`` (search rights on every ancestor)?"""
    here = Path(path)
    return all(folder.stat().st_mode & stat.S_IXOTH for folder in (here, *here.parents))


@functools.cache
def _interpreter() -> tuple[str, str]:
    """(interpreter, its prefix) for the sandbox: this process's own, unless we are root and
    the unprivileged uid that runs bwrap cannot reach it (pyenv under ``/root``): then the
    system's ``/usr/bin/python3`` (the programs need the standard library only)."""
    prefix = os.path.realpath(sys.base_prefix)
    if os.geteuid() == 0 and not _open_to_others(prefix) and os.path.exists(SYSTEM_PYTHON):
        return SYSTEM_PYTHON, "/usr"
    return os.path.realpath(sys.executable), prefix


@functools.cache
def _mount_plan() -> tuple[tuple[str, ...], tuple[tuple[str, str], ...], tuple[str, ...]]:
    """(read-only sources, links as (target, path), site-packages to hide), fixed per process."""
    prefix = _interpreter()[1]
    sources = ["/usr"] if prefix.startswith("/usr") else ["/usr", prefix]
    links = []
    for path in _SYSTEM_LINKS:
        if os.path.islink(path):
            links.append((os.readlink(path), path))
        elif os.path.isdir(path):
            sources.append(path)
    # Wherever Python packages are installed (the project's code among them), in any layout.
    hidden = {
        os.path.realpath(found)
        for source in sources
        for pattern in (
            "lib/python3*/site-packages",
            "lib/python3*/dist-packages",
            "lib/python3/dist-packages",
            "local/lib/python3*/*-packages",
        )
        for found in Path(source).glob(pattern)
        if found.is_dir()
    }
    return tuple(sources), tuple(links), tuple(sorted(hidden))


def _bwrap_command(
    config: SandboxConfig, limits: Limits, sources: dict[str, int], program: int
) -> list[str]:
    _, links, hidden = _mount_plan()
    # Not --disable-userns: it writes /proc/sys, which container runtimes mount read-only.
    command = [config.bwrap, "--unshare-all", "--unshare-user"]
    command += ["--die-with-parent"]
    command += ["--new-session", "--uid", str(NOBODY), "--gid", str(NOBODY)]
    for source, fd in sources.items():
        command += ["--ro-bind-fd", str(fd), source]
    for target, path in links:
        command += ["--symlink", target, path]
    for path in hidden:
        command += ["--tmpfs", path]
    command += ["--dev", "/dev", "--remount-ro", "/dev"]
    command += ["--size", str(limits.disk_bytes), "--perms", "0700", "--tmpfs", _WORK]
    command += ["--file", str(program), f"{_WORK}/program.py"]
    command += ["--remount-ro", "/", "--chdir", _WORK]
    for key in ("HOME", "TMPDIR"):
        command += ["--setenv", key, _WORK]
    return [*command, "--", *_launcher_command(_WORK, limits)]


def _launcher_command(workdir: str, limits: Limits) -> list[str]:
    numbers = (
        limits.cpu_seconds,
        limits.memory_bytes,
        limits.file_size_bytes,
        limits.max_processes,
        limits.max_open_files,
    )
    return [_interpreter()[0], "-I", "-S", "-c", _launcher_source(), workdir, *map(str, numbers)]


def _tail(handle: IO[bytes], size: int) -> str:
    handle.seek(0, os.SEEK_END)
    handle.seek(max(0, handle.tell() - size))
    return handle.read().decode("utf-8", errors="replace")


_STATUS_OF_EXIT = {
    codes.EXIT_OK: (Status.PASSED, ""),
    codes.EXIT_EXCEPTION: (Status.FAILED, "exception"),
    codes.EXIT_CALLED_EXIT: (Status.FAILED, "the program called exit()"),
    codes.EXIT_MEMORY: (Status.MEMORY, "MemoryError"),
    codes.EXIT_FILE_SIZE: (Status.FILE_SIZE, "file size limit"),
}


def _status(returncode: int, duration: float, limits: Limits) -> tuple[Status, str]:
    if returncode in _STATUS_OF_EXIT:
        return _STATUS_OF_EXIT[returncode]
    # bwrap reports a signal as 128 + its number; without bwrap it is a negative code.
    number = returncode - 128 if returncode > 128 else -returncode if returncode < 0 else 0
    if not number:
        return Status.FAILED, f"exit status {returncode}"
    if number == signal.SIGXCPU or (number == signal.SIGKILL and duration >= limits.cpu_seconds):
        return Status.TIMEOUT, "CPU time limit"
    if number == signal.SIGXFSZ:
        return Status.FILE_SIZE, "file size limit"
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = str(number)
    return Status.CRASHED, f"killed by {name}"


def _ids(config: SandboxConfig) -> tuple[int, int] | None:
    """The unprivileged (uid, gid) to run as when we are root, else None."""
    if os.geteuid() != 0:
        return None
    uid = NOBODY if config.uid is None else config.uid
    return uid, uid if config.gid is None else config.gid


def _open_sources() -> dict[str, int]:
    sources, _, _ = _mount_plan()
    return {source: os.open(source, os.O_PATH | os.O_DIRECTORY) for source in sources}


def _unconfined_workdir(program: IO[bytes], ids: tuple[int, int] | None) -> str:
    """The opt-out's private directory holding program.py, owned by the uid that runs it."""
    workdir = tempfile.mkdtemp(prefix="arena-sandbox-")
    path = os.path.join(workdir, "program.py")
    with open(path, "wb") as copy:
        shutil.copyfileobj(program, copy)
    if ids is not None:
        for owned in (workdir, path):
            os.chown(owned, *ids)
    return workdir


def _wait(proc: subprocess.Popen[bytes], wall_seconds: float) -> int | None:
    """The exit code, or None once the wall clock ran out (everything then killed)."""
    try:
        return proc.wait(timeout=wall_seconds)
    except subprocess.TimeoutExpired:
        return None
    finally:
        if proc.poll() is None:
            # Not reaped yet, so its process group id cannot have been reused. bwrap's
            # --die-with-parent takes the sandbox's own session with it.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _execute(
    program: IO[bytes],
    output: tuple[IO[bytes], IO[bytes]],
    limits: Limits,
    config: SandboxConfig,
    mode: Isolation,
) -> tuple[int | None, subprocess.Popen[bytes]]:
    ids = _ids(config)
    sources: dict[str, int] = {}
    workdir = None
    try:
        if mode == "bwrap":
            sources = _open_sources()
            command = _bwrap_command(config, limits, sources, program.fileno())
            env = dict(_ENV)
        else:
            workdir = _unconfined_workdir(program, ids)
            command = _launcher_command(workdir, limits)
            env = {**_ENV, "HOME": workdir, "TMPDIR": workdir}
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=output[0],
            stderr=output[1],
            env=env,
            cwd=workdir,
            close_fds=True,
            pass_fds=(*sources.values(), program.fileno()),
            start_new_session=True,
            user=None if ids is None else ids[0],
            group=None if ids is None else ids[1],
            extra_groups=None if ids is None else [],
        )
        return _wait(proc, limits.wall_seconds), proc
    finally:
        for fd in sources.values():
            os.close(fd)
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)


def _run(
    source: str, limits: Limits, config: SandboxConfig, report: IsolationReport
) -> SandboxResult:
    started = time.perf_counter()
    result = functools.partial(SandboxResult, isolation=report.mode, limitations=report.limitations)
    try:
        with (
            tempfile.TemporaryFile() as program,
            tempfile.TemporaryFile() as out,
            tempfile.TemporaryFile() as err,
        ):
            # A lone surrogate (JSON can carry one) cannot be UTF-8: it becomes "?", and the
            # program runs (and most likely fails) like any other.
            program.write(source.encode("utf-8", errors="replace"))
            program.flush()
            program.seek(0)
            returncode, proc = _execute(program, (out, err), limits, config, report.mode)
            duration = time.perf_counter() - started
            stderr = _tail(err, limits.output_tail_bytes)
            if returncode is None:
                status, detail = Status.TIMEOUT, f"wall-clock limit ({limits.wall_seconds:g} s)"
            elif report.mode == "bwrap" and stderr.startswith("bwrap:"):
                status, detail = Status.ERROR, f"bubblewrap failed: {stderr.strip()[:300]}"
            else:
                status, detail = _status(returncode, duration, limits)
            stdout = _tail(out, limits.output_tail_bytes)
            return result(status, proc.returncode, stdout, stderr, duration, detail=detail)
    except OSError as exc:
        detail = f"could not start the sandbox: {exc}"
        return result(Status.ERROR, None, "", "", time.perf_counter() - started, detail=detail)


_probe_lock = threading.Lock()
_probed: dict[SandboxConfig, IsolationReport] = {}


def _probe(config: SandboxConfig) -> IsolationReport:
    if shutil.which(config.bwrap) is None:
        return IsolationReport("bwrap", False, why="bwrap is not installed (package bubblewrap)")
    candidate = IsolationReport("bwrap", True)
    probe = _run("print('sandbox ok')\n", Limits(), config, candidate)
    if probe.status is Status.PASSED and probe.stdout.strip() == "sandbox ok":
        return candidate
    why = probe.detail if probe.status is Status.ERROR else probe.stderr.strip()[-300:]
    return IsolationReport("bwrap", False, why=f"bwrap failed: {why or probe.status}")


def isolation_report(config: SandboxConfig = DEFAULT_CONFIG) -> IsolationReport:
    """What ``config.isolation`` gives here (bubblewrap is tried once per process)."""
    if config.isolation == "none":
        return IsolationReport("none", True, _NONE_LIMITATIONS)
    with _probe_lock:
        if config not in _probed:
            _probed[config] = _probe(config)
        return _probed[config]


def require_isolation(config: SandboxConfig = DEFAULT_CONFIG) -> IsolationReport:
    """The report, or `IsolationUnavailable` saying what failed and how to opt out."""
    report = isolation_report(config)
    if not report.available:
        raise IsolationUnavailable(refusal(report.why))
    return report


def run_python(
    source: str, *, limits: Limits = DEFAULT_LIMITS, config: SandboxConfig = DEFAULT_CONFIG
) -> SandboxResult:
    """Run ``source`` as ``__main__`` in a new sandboxed process and report how it ended.

    Raises `IsolationUnavailable` when isolation is configured and cannot be had."""
    return _run(source, limits, config, require_isolation(config))
