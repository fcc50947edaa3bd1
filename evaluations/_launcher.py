"""Runs inside the sandbox: sets the resource limits, then runs one program as ``__main__``.

``evaluations.sandbox`` passes this file's text to ``python -I -S -c`` inside bubblewrap
(or, when an operator opted out of isolation, directly), with the limits as arguments; the
program is ``/work/program.py`` inside the sandbox (the work directory given as the first
argument outside it). Standard library only, and nothing of the project: the project's files
are not visible where it runs.

The limits are set here, inside the sandbox's own user namespace, so that the process count
is that namespace's alone: one run's fork bomb cannot use up another run's processes.
``exit()`` and ``quit()`` (which ``-S`` leaves undefined) are defined, so a program calling
them ends the documented way: a failure saying it called ``exit``. The program's fate becomes
the exit code (``EXIT_*``) that the host maps to a status; a signal ends it with 128 + the
signal's number. Exit codes are advisory: the program can ``os._exit`` with any number (the
sandbox protects the host, not the score).
"""

from __future__ import annotations

import builtins
import errno
import os
import resource
import signal
import sys

EXIT_OK = 0
EXIT_EXCEPTION = 1
EXIT_MEMORY = 90
EXIT_FILE_SIZE = 91
EXIT_CALLED_EXIT = 92


def _exit(code: object = None) -> None:
    raise SystemExit(code)


def _set_limits(cpu: int, memory: int, file_size: int, processes: int, open_files: int) -> None:
    # The soft CPU limit sends SIGXCPU; one second later the hard limit sends SIGKILL.
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    for kind, value in (
        (resource.RLIMIT_AS, memory),
        (resource.RLIMIT_FSIZE, file_size),
        (resource.RLIMIT_NPROC, processes),
        (resource.RLIMIT_NOFILE, open_files),
        (resource.RLIMIT_CORE, 0),
    ):
        resource.setrlimit(kind, (value, value))


def main() -> None:
    workdir = sys.argv[1]
    path = os.path.join(workdir, "program.py")
    os.chdir(workdir)
    with open(path, encoding="utf-8", errors="replace") as handle:
        source = handle.read()
    try:
        code = compile(source, path, "exec")
    except (SyntaxError, ValueError):
        # Code that does not compile (a model's syntax error, a NUL byte) fails like any other
        # error of the program, not as a fault of the sandbox.
        sys.excepthook(*sys.exc_info())
        sys.stderr.flush()
        os._exit(EXIT_EXCEPTION)
    _set_limits(*(int(value) for value in sys.argv[2:7]))
    # Python ignores SIGXFSZ (a write past the limit raises EFBIG); restore default SIGPIPE too.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    builtins.exit = builtins.quit = _exit  # type: ignore[assignment]
    sys.argv = [path]
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
        sys.excepthook(*sys.exc_info())
    except BaseException:
        sys.excepthook(*sys.exc_info())
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


if __name__ == "__main__":
    main()
