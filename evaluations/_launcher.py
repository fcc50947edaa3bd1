"""Runs inside the sandbox's child process: builds its file system, drops privileges, runs one program.

Started by ``evaluations.sandbox`` as ``python -I -S _launcher.py JOBDIR`` (inside ``unshare``'s
namespaces when the kernel allows them). Standard library only, and nothing from this project:
it must not need the project's files once the file system is replaced.

What it does, in order:

1. reads ``JOBDIR/config`` (``key=value`` lines, see `read_config`) and ``JOBDIR/program.py``;
2. with ``"fs": "pivot"`` (a private mount namespace): builds a new root on a small tmpfs holding
   read-only, ``nosuid`` bind mounts of ``/usr``, the ``/lib*``, ``/bin``, ``/sbin`` links and the
   interpreter's own ``sys.path`` directories, a fresh ``/proc``, ``/dev/{null,zero,random,urandom}``
   and a size-limited writable ``/work`` tmpfs; then ``pivot_root`` into it, detaches the old root
   and remounts ``/`` read-only. Nothing else of the host (``/tmp``, ``/run`` with its sockets,
   ``/home``, the project) is visible;
3. forks the worker (in its own process group) and waits for it; as PID 1 of the PID namespace,
   or as a child subreaper without one, it also reaps the program's orphans, and once the
   worker has ended (or the host sends SIGTERM at the wall-clock limit) it kills and reaps
   everything the program left behind;
4. the worker sets the rlimits, closes inherited descriptors, drops to the configured uid, sets
   ``no_new_privs``, and ``exec``s the program's code object as ``__main__``;
5. the worker's fate becomes the exit code (``EXIT_*`` below) that the host maps to a status.

Its own imports are kept few (each costs every run): no json, no traceback (errors are
printed by the interpreter's built-in hook), no typing at run time.

Exit codes are advisory: code running in the worker can call ``os._exit`` with any number. The
sandbox protects the host, not the score (see docs/evaluations.md).
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import errno
import os
import resource
import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

EXIT_OK = 0
EXIT_EXCEPTION = 1
EXIT_MEMORY = 90
EXIT_FILE_SIZE = 91
EXIT_CALLED_EXIT = 92
EXIT_SETUP = 93
EXIT_CPU = 94
EXIT_TERMINATED = 95
EXIT_SIGNAL_BASE = 128

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MNT_DETACH = 2
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36

# pivot_root has no libc wrapper; its number per architecture (asm-generic for the rest).
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "armv7l": 218, "i686": 217}
_BASE_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
_DEVICES = ("null", "zero", "random", "urandom")

_LIBC: list[ctypes.CDLL] = []


def _libc() -> ctypes.CDLL:
    if not _LIBC:
        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


def _print_exc() -> None:
    sys.__excepthook__(*sys.exc_info())


def read_config(text: str) -> dict[str, Any]:
    """``key=value`` lines; ``limits.*`` are numbers, ``uid``/``gid`` numbers or empty,
    ``preload`` a comma-separated list."""
    cfg: dict[str, Any] = {"limits": {}}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.startswith("limits."):
            cfg["limits"][key.removeprefix("limits.")] = (
                float(value) if "." in value else int(value)
            )
        elif key in ("uid", "gid"):
            cfg[key] = int(value) if value else None
        elif key == "preload":
            cfg[key] = [name for name in value.split(",") if name]
        else:
            cfg[key] = value
    return cfg


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    _check(
        _libc().mount(
            source.encode() if source else None,
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _kept_flags(path: str) -> int:
    """Flags a bind remount must keep: in a user namespace the kernel refuses to clear them."""
    f = os.statvfs(path).f_flag
    flags = 0
    for st, ms in (
        (os.ST_NOSUID, MS_NOSUID),
        (os.ST_NODEV, MS_NODEV),
        (os.ST_NOEXEC, MS_NOEXEC),
        (os.ST_NOATIME, MS_NOATIME),
        (os.ST_NODIRATIME, MS_NODIRATIME),
        (os.ST_RELATIME, MS_RELATIME),
    ):
        if f & st:
            flags |= ms
    return flags


def _bind_readonly(source: str, target: str) -> None:
    _mount(source, target, None, MS_BIND)
    flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | _kept_flags(source)
    _mount(None, target, None, flags)


def _bind_paths() -> list[str]:
    """Top-level paths to expose: the system's and the interpreter's (no path inside another)."""
    wanted = [p for p in _BASE_PATHS if os.path.lexists(p)]
    wanted += [os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)]
    chosen: list[str] = []
    for path in sorted(set(wanted), key=len):
        if not any(path == c or path.startswith(c.rstrip("/") + "/") for c in chosen):
            chosen.append(path)
    return chosen


def _pivot_root() -> None:
    number = _SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is None:
        raise OSError(errno.ENOSYS, f"pivot_root number unknown on {os.uname().machine}")
    # pivot_root(".", "."): the old root ends up stacked on the new one and is detached below.
    _check(_libc().syscall(ctypes.c_long(number), b".", b"."), "pivot_root")
    _check(_libc().umount2(b".", MNT_DETACH), "umount old root")
    os.chdir("/")


def _build_root(job: str, cfg: dict[str, Any]) -> str:
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    root = os.path.join(job, "root")
    os.mkdir(root, 0o755)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0755")
    for path in _bind_paths():
        target = root + path
        if os.path.islink(path):
            os.makedirs(os.path.dirname(target), 0o755, exist_ok=True)
            os.symlink(os.readlink(path), target)
            continue
        os.makedirs(target, 0o755, exist_ok=True)
        _bind_readonly(path, target)
    os.mkdir(root + "/dev", 0o755)
    for name in _DEVICES:
        with open(f"{root}/dev/{name}", "w"):
            pass
        _mount(f"/dev/{name}", f"{root}/dev/{name}", None, MS_BIND)
    os.mkdir(root + "/proc", 0o555)
    # Not needed to run Python, and some container runtimes forbid a fresh proc.
    with contextlib.suppress(OSError):
        _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    owner = "" if cfg["uid"] is None else f",uid={cfg['uid']},gid={cfg['gid']}"
    os.mkdir(root + "/work", 0o755)
    _mount(
        "tmpfs",
        root + "/work",
        "tmpfs",
        MS_NOSUID | MS_NODEV,
        f"size={cfg['limits']['disk_bytes']},mode=0700{owner}",
    )
    os.chdir(root)
    _pivot_root()
    _mount(None, "/", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    return "/work"


def _limit(kind: int, value: int, hard: int | None = None) -> None:
    resource.setrlimit(kind, (value, value if hard is None else hard))


def _set_limits(limits: dict[str, Any]) -> None:
    cpu = int(limits["cpu_seconds"])
    # The soft limit sends SIGXCPU; one second later the hard limit sends SIGKILL.
    _limit(resource.RLIMIT_CPU, cpu, cpu + 1)
    _limit(resource.RLIMIT_AS, int(limits["memory_bytes"]))
    _limit(resource.RLIMIT_FSIZE, int(limits["file_size_bytes"]))
    _limit(resource.RLIMIT_NPROC, int(limits["max_processes"]))
    _limit(resource.RLIMIT_NOFILE, int(limits["max_open_files"]))
    _limit(resource.RLIMIT_CORE, 0)


def _worker(source: str, workdir: str, cfg: dict[str, Any]) -> None:
    path = os.path.join(workdir, "program.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(source)
    os.chdir(workdir)
    for name in cfg["preload"]:
        __import__(name)
    try:
        code = compile(source, path, "exec")
    except (SyntaxError, ValueError):
        # Code that does not compile (a model's syntax error, a NUL byte) fails like any
        # other error of the program, not as a fault of the sandbox.
        _print_exc()
        sys.stderr.flush()
        os._exit(EXIT_EXCEPTION)
    os.closerange(3, 1 << 16)
    _set_limits(cfg["limits"])
    if cfg["uid"] is not None:
        os.setgroups([])
        os.setgid(cfg["gid"])
        os.setuid(cfg["uid"])
    _check(_libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    # Python ignores SIGXFSZ (a write past the limit raises EFBIG); restore default SIGPIPE too.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.argv = [path]
    os.environ["HOME"] = os.environ["TMPDIR"] = workdir
    namespace = {"__name__": "__main__", "__file__": path, "__builtins__": builtins}
    status = EXIT_OK
    try:
        exec(code, namespace)
    except MemoryError:
        status = EXIT_MEMORY
    except SystemExit as stop:
        print(f"sandbox: the program called exit({stop.code!r})", file=sys.stderr)
        status = EXIT_CALLED_EXIT
    except OSError as exc:
        status = EXIT_FILE_SIZE if exc.errno == errno.EFBIG else EXIT_EXCEPTION
        _print_exc()
    except BaseException:
        _print_exc()
        status = EXIT_EXCEPTION
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            status = EXIT_FILE_SIZE
    except MemoryError:
        status = EXIT_MEMORY
    os._exit(status)


class _Terminated(Exception):
    """The host ran out of wall-clock time and asked us (SIGTERM) to end the program."""


def _on_term(_signum: int, _frame: object) -> None:
    raise _Terminated


def _children() -> list[int]:
    pids: list[int] = []
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/children", encoding="ascii") as handle:
                pids += [int(p) for p in handle.read().split()]
    except OSError:
        pass  # no /proc or no CONFIG_PROC_CHILDREN: the process-group kill has to do
    return pids


def _kill_all(worker: int) -> None:
    """Kill the program's process group and every other descendant, and reap them all.

    We are their reaper (PID 1 of the namespace, or a child subreaper): processes that
    escaped the group with setsid() still end up as our children when their parents die.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(worker, signal.SIGKILL)
    while True:
        for pid in _children():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            os.wait4(-1, 0)
        except ChildProcessError:
            return


def _fate(status: int, usage: resource.struct_rusage, cpu_limit: float) -> int:
    """The worker's end as an exit code."""
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    sig = os.WTERMSIG(status)
    used = usage.ru_utime + usage.ru_stime
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and used >= cpu_limit - 0.05):
        return EXIT_CPU
    if sig == signal.SIGXFSZ:
        return EXIT_FILE_SIZE
    return EXIT_SIGNAL_BASE + sig


def _supervise(pid: int, cpu_limit: float) -> int:
    """Reap children until the worker is collected, then make sure nothing of it is left."""
    code = EXIT_SETUP
    try:
        while True:
            try:
                got, status, usage = os.wait4(-1, 0)
            except ChildProcessError:
                break
            if got == pid:
                code = _fate(status, usage, cpu_limit)
                break
            # anything else is an orphan of the program, reparented to us
    except _Terminated:
        code = EXIT_TERMINATED
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _kill_all(pid)
    return code


def main() -> None:
    job = sys.argv[1]
    try:
        with open(os.path.join(job, "config"), encoding="utf-8") as handle:
            cfg = read_config(handle.read())
        with open(os.path.join(job, "program.py"), encoding="utf-8") as handle:
            source = handle.read()
        workdir = _build_root(job, cfg) if cfg["fs"] == "pivot" else os.path.join(job, "work")
    except BaseException:
        _print_exc()
        print("sandbox: setup failed", file=sys.stderr)
        os._exit(EXIT_SETUP)
    sys.stderr.flush()
    signal.signal(signal.SIGTERM, _on_term)
    # Orphans of the program are reparented to us, not to the host's init (which may never
    # reap them: zombies would count against the uid's process limit of later runs).
    _libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    pid = os.fork()
    if pid == 0:
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.setpgid(0, 0)
            _worker(source, workdir, cfg)
        except BaseException:
            _print_exc()
            sys.stderr.flush()
        os._exit(EXIT_SETUP)
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)  # also here: the host may look for the group before the child ran
    if cfg["fs"] == "none":
        # For the host's last resort: if we are killed, it kills the program's group itself.
        with contextlib.suppress(OSError), open(os.path.join(job, "worker.pid"), "w") as handle:
            handle.write(str(pid))
    os._exit(_supervise(pid, float(cfg["limits"]["cpu_seconds"])))


if __name__ == "__main__":
    main()
