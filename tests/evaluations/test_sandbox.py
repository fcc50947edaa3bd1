"""The sandbox stops runaway and hostile programs, records them as failures, and survives them.

Pure (``pytest -p no:django tests/evaluations/test_sandbox.py``). Every hostile attempt runs
under bubblewrap, the isolation the product runs by default, and must fail there: these
tests need ``bwrap`` (``.ci/run`` installs Debian's package) and fail, not skip, without it.
The limits that do not depend on namespaces are also checked under the ``none`` opt-out.
Durations are never asserted: the limits are what is checked, through the reported status.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

import evaluations
from evaluations.sandbox import (
    SETTING,
    IsolationUnavailable,
    Limits,
    SandboxConfig,
    Status,
    isolation_report,
    run_python,
)

BWRAP = SandboxConfig()
NONE = SandboxConfig(isolation="none")
BOTH = pytest.mark.parametrize("config", [BWRAP, NONE], ids=["bwrap", "none"])
QUICK = Limits(cpu_seconds=1, wall_seconds=30)
PROJECT = Path(evaluations.__file__).resolve().parent.parent

CORRECT = """
def add(a, b):
    return a + b

assert add(2, 3) == 5
print("all good")
"""

FORK_BOMB = """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
"""


def _processes_of(uid: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    pids.append(int(entry))
            except FileNotFoundError:
                pass
    return pids


def _wait_until(predicate, deadline_s: float = 30.0) -> bool:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _attempts(*statements: str) -> str:
    """A program trying each statement and printing ``escaped: <statement>`` for any that
    worked (an attempt that fails is the expected outcome)."""
    lines = ["import os, socket"]
    for statement in statements:
        lines += ["try:", f"    {statement}", f"    print('escaped:', {statement!r})"]
        lines += ["except Exception as exc:", "    print('refused:', type(exc).__name__)"]
    return "\n".join(lines) + "\n"


def test_bubblewrap_isolates_on_this_machine():
    report = isolation_report(BWRAP)
    assert report.available, report.why  # CI installs bubblewrap: this must not be skipped
    assert (report.mode, report.limitations) == ("bwrap", ())
    result = run_python("print(1)")
    assert result.isolation == "bwrap" and result.limitations == ()


def test_without_isolation_runs_are_refused_naming_the_opt_out():
    missing = SandboxConfig(bwrap="/nonexistent/bwrap")
    assert not isolation_report(missing).available
    with pytest.raises(IsolationUnavailable, match=f"{SETTING}=none") as refused:
        run_python(CORRECT, config=missing)
    assert "bubblewrap" in str(refused.value)


def test_the_opt_out_says_on_every_result_that_nothing_is_isolated():
    result = run_python("print(1)", config=NONE)
    assert result.passed and result.isolation == "none"
    assert any("network not isolated" in item for item in result.limitations)
    assert any(f"{SETTING}=none" in item for item in result.limitations)


@BOTH
def test_correct_program_passes(config):
    result = run_python(CORRECT, config=config)
    assert result.status is Status.PASSED, result.stderr
    assert result.passed
    assert result.stdout.strip() == "all good"
    assert result.returncode == 0


@BOTH
def test_failing_assertion_is_a_failure(config):
    result = run_python("assert 1 + 1 == 3, 'arithmetic'", config=config)
    assert result.status is Status.FAILED
    assert "AssertionError: arithmetic" in result.stderr


@BOTH
def test_code_that_does_not_compile_is_a_failure_not_a_sandbox_error(config):
    result = run_python("def f():\n    return 1\n        return 2\n", config=config)
    assert result.status is Status.FAILED, result
    assert "IndentationError" in result.stderr
    assert run_python("x = 1\0", config=config).status is Status.FAILED


def test_a_lone_surrogate_in_the_source_is_run_not_raised():
    assert run_python("x = '\ud800'\nassert x == '?'\n").passed


@BOTH
@pytest.mark.parametrize("call", ["exit(0)", "quit(0)", "import sys; sys.exit(0)"])
def test_calling_exit_is_a_failure_saying_so(config, call):
    # exit() and quit() exist although the interpreter runs without site (-S).
    result = run_python(f"{call}\nassert False", config=config)
    assert result.status is Status.FAILED, result
    assert result.detail == "the program called exit()"
    assert "called exit(0)" in result.stderr and "NameError" not in result.stderr


@BOTH
def test_infinite_loop_hits_the_cpu_limit(config):
    result = run_python("while True:\n    pass\n", limits=QUICK, config=config)
    assert result.status is Status.TIMEOUT
    assert "CPU" in result.detail


@BOTH
def test_sleeping_program_hits_the_wall_clock_limit(config):
    limits = Limits(cpu_seconds=5, wall_seconds=1)
    result = run_python("import time\ntime.sleep(3600)\n", limits=limits, config=config)
    assert result.status is Status.TIMEOUT
    assert "wall-clock" in result.detail


@BOTH
def test_fork_bomb_is_contained(config):
    uid = None
    if os.geteuid() == 0:
        # A uid of its own, so that what is left of the bomb afterwards can be counted.
        uid = 61_017 if config is BWRAP else 61_018
        config = SandboxConfig(isolation=config.isolation, uid=uid)
    limits = Limits(cpu_seconds=2, wall_seconds=3, max_processes=16)
    result = run_python(FORK_BOMB, limits=limits, config=config)
    assert result.status is Status.TIMEOUT
    # The caller survives, can still start processes, and the next run works.
    assert subprocess.run([sys.executable, "-c", "print(7)"], capture_output=True).stdout == b"7\n"
    assert run_python(CORRECT, config=config).passed
    if uid is not None:
        assert _wait_until(lambda: not _processes_of(uid)), _processes_of(uid)


BOMB_AT_ITS_LIMIT = """
import os, time
while True:
    try:
        if os.fork() == 0:
            time.sleep(3600)
            os._exit(0)
    except OSError:
        print("limit reached at", time.time(), flush=True)
        time.sleep(3600)
"""

FORKING_CORRECT = """
import os
children = []
for _ in range(8):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
print("forked 8")
"""


def test_a_fork_bomb_in_one_lane_does_not_fail_a_correct_program_in_another():
    # Both lanes run as the same uid: only the per-run user namespace separates their
    # process counts. The bomb holds every process its limit allows until its wall clock.
    limits = Limits(cpu_seconds=20, wall_seconds=8)  # the same process limit as the other lane
    bomb: dict[str, object] = {}
    lane = threading.Thread(
        target=lambda: bomb.update(result=run_python(BOMB_AT_ITS_LIMIT, limits=limits))
    )
    lane.start()
    runs = []
    while lane.is_alive():
        started = time.time()
        runs.append((started, run_python(FORKING_CORRECT), time.time()))
    lane.join()
    result = bomb["result"]
    assert result.status is Status.TIMEOUT, result
    assert "limit reached at" in result.stdout, result
    at_limit = float(result.stdout.split("limit reached at")[1].split()[0])
    for _, other, _ in runs:
        assert other.passed and other.stdout.strip() == "forked 8", other
    # Some of those runs forked while the bomb held all it could.
    assert any(start > at_limit for start, _, _ in runs)


@BOTH
def test_ten_gigabyte_allocation_is_refused(config):
    result = run_python("block = bytearray(10 * 1024**3)\n", config=config)
    assert result.status is Status.MEMORY


@BOTH
def test_huge_file_write_hits_the_file_size_limit(config):
    program = (
        "with open('big.bin', 'wb') as f:\n    while True:\n        f.write(b'x' * (1 << 20))\n"
    )
    limits = Limits(file_size_bytes=2 << 20)
    result = run_python(program, limits=limits, config=config)
    assert result.status is Status.FILE_SIZE


def test_filling_the_work_directory_stops_at_its_size():
    program = "open('a.bin', 'wb').write(b'x' * (3 << 20))\n"
    result = run_python(program, limits=Limits(disk_bytes=1 << 20))
    assert result.status is Status.FAILED and "No space left" in result.stderr


@BOTH
def test_flooding_stdout_is_cut_at_the_file_size_limit(config):
    limits = Limits(file_size_bytes=1 << 20, output_tail_bytes=100)
    result = run_python("while True:\n    print('y' * 1000)\n", limits=limits, config=config)
    assert result.status is Status.FILE_SIZE
    assert len(result.stdout) <= 100


@BOTH
def test_writing_inside_the_work_directory_works(config):
    program = "open('notes.txt', 'w').write('hi')\nassert open('notes.txt').read() == 'hi'\n"
    assert run_python(program, config=config).passed


# ------------------------------------------------------------ hostile attempts (bubblewrap)


def test_a_program_cannot_connect_to_a_loopback_listener_redis_or_postgresql():
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        port = server.getsockname()[1]
        result = run_python(
            _attempts(
                f"socket.create_connection(('127.0.0.1', {port}), timeout=5)",
                "socket.create_connection(('127.0.0.1', 6379), timeout=5)",
                "socket.create_connection(('127.0.0.1', 5432), timeout=5)",
                "socket.create_connection(('localhost', 5432), timeout=5)",
                "socket.socket(socket.AF_UNIX).connect('/var/run/postgresql/.s.PGSQL.5432')",
                "socket.socket(socket.AF_UNIX).connect('/run/postgresql/.s.PGSQL.5432')",
            )
        )
        # A connection that had been made would be waiting in the listen backlog now.
        with pytest.raises(BlockingIOError):
            server.accept()
    assert result.passed, result
    assert "escaped" not in result.stdout and result.stdout.count("refused:") == 6, result.stdout


def test_a_program_cannot_read_the_projects_files_or_the_hosts():
    targets = [
        PROJECT / "evaluations" / "sandbox.py",
        Path(__file__).resolve(),
        PROJECT / "arena_site" / "settings.py",
        Path("/etc/passwd"),
        Path(sys.executable),
    ]
    readable_here = [path for path in targets if path.exists()]
    assert len(readable_here) == len(targets)  # the test would prove nothing otherwise
    result = run_python(
        _attempts(
            *(f"open({str(path)!r}, 'rb').read()" for path in targets),
            f"os.listdir({str(PROJECT)!r})",
            "os.listdir('/etc')",
            "__import__('evaluations')",
            "__import__('django')",
        )
    )
    assert result.passed, result
    assert "escaped" not in result.stdout, result.stdout


def test_a_program_cannot_write_outside_its_directory(tmp_path):
    marker = f"arena-escape-{os.getpid()}"
    targets = [
        tmp_path / marker,
        Path("/tmp") / marker,
        Path("/var/tmp") / marker,
        Path("/dev/shm") / marker,
        Path("/dev") / marker,
        Path("/usr") / marker,
        Path("/") / marker,
        PROJECT / marker,
    ]
    result = run_python(_attempts(*(f"open({str(path)!r}, 'w').write('x')" for path in targets)))
    assert result.passed, result
    assert "escaped" not in result.stdout, result.stdout
    assert not [path for path in targets if path.exists()]


def test_a_program_cannot_see_or_signal_the_hosts_processes():
    result = run_python(
        _attempts(
            "os.listdir('/proc')",
            f"os.kill({os.getpid()}, 0)",
            "open('/proc/1/cmdline').read()",
        )
    )
    assert result.passed, result
    assert "escaped" not in result.stdout, result.stdout


def test_environment_is_scrubbed(monkeypatch):
    monkeypatch.setenv("ARENA_TEST_SECRET", "do-not-leak")
    result = run_python("import os\nprint(sorted(os.environ))\n")
    assert result.passed
    assert "ARENA_TEST_SECRET" not in result.stdout
    assert "do-not-leak" not in result.stdout


def test_work_directories_are_removed():
    before = set(Path(tempfile.gettempdir()).glob("arena-sandbox-*"))
    for config in (BWRAP, NONE):
        assert run_python("open('x', 'w').write('1')\n", config=config).passed
    assert set(Path(tempfile.gettempdir()).glob("arena-sandbox-*")) <= before
