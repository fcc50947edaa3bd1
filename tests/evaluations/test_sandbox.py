"""The sandbox stops runaway and hostile programs, records them as failures, and survives them.

Pure (``pytest -p no:django tests/evaluations/test_sandbox.py``). Each hostile program runs
under the strongest isolation this machine allows (``auto``) and, where the limit does not
depend on namespaces, under the ``none`` fallback too. Durations are never asserted: the
limits are what is checked, through the status the sandbox reports.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from evaluations.sandbox import (
    Limits,
    SandboxConfig,
    Status,
    isolation_report,
    run_python,
)

AUTO = SandboxConfig()
NONE = SandboxConfig(isolation="none")
BOTH = pytest.mark.parametrize("config", [AUTO, NONE], ids=["auto", "none"])
QUICK = Limits(cpu_seconds=1, wall_seconds=30)

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


def test_isolation_report_is_consistent():
    report = isolation_report(AUTO)
    assert report.mode in ("namespaces", "user-namespaces", "none")
    assert (report.mode == "none") == bool(report.limitations)
    result = run_python("print(1)", config=AUTO)
    assert result.isolation == report.mode
    assert result.limitations == report.limitations


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
def test_calling_exit_is_not_a_pass(config):
    result = run_python("import sys\nsys.exit(0)\nassert False", config=config)
    assert result.status is Status.FAILED
    assert "exit(0)" in result.stderr


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
        uid = 61_017 if config is AUTO else 61_018
        config = SandboxConfig(isolation=config.isolation, uid=uid)
    limits = Limits(cpu_seconds=2, wall_seconds=3, max_processes=16)
    result = run_python(FORK_BOMB, limits=limits, config=config)
    assert result.status is Status.TIMEOUT
    # The caller survives, can still start processes, and the next run works.
    assert subprocess.run([sys.executable, "-c", "print(7)"], capture_output=True).stdout == b"7\n"
    assert run_python(CORRECT, config=config).passed
    if uid is not None:
        assert _wait_until(lambda: not _processes_of(uid)), _processes_of(uid)


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


@BOTH
def test_writing_outside_the_work_directory_fails(config, tmp_path):
    targets = [str(tmp_path / "escaped.txt"), "/usr/escaped.txt", "/escaped.txt"]
    if isolation_report(config).mode == "none" and os.geteuid() != 0:
        # No mount namespace and no uid to drop to: the caller's own files are writable.
        assert any("host files visible" in item for item in isolation_report(config).limitations)
        targets = targets[1:]
    for path in targets:
        result = run_python(f"open({path!r}, 'w').write('gotcha')\n", config=config)
        assert result.status is Status.FAILED, (path, result)
        assert "Error" in result.stderr
        assert not os.path.exists(path)


def test_network_is_unreachable_or_the_limitation_is_recorded():
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        port = server.getsockname()[1]
        program = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5)\n"
        result = run_python(program, config=AUTO)
        if isolation_report(AUTO).mode == "none":
            assert any("network not isolated" in item for item in result.limitations)
            return
        assert result.status is Status.FAILED
        assert "unreachable" in result.stderr.lower()
        # A connection that had been made would be waiting in the listen backlog now.
        with pytest.raises(BlockingIOError):
            server.accept()


def test_environment_is_scrubbed(monkeypatch):
    monkeypatch.setenv("ARENA_TEST_SECRET", "do-not-leak")
    result = run_python("import os\nprint(sorted(os.environ))\n", config=AUTO)
    assert result.passed
    assert "ARENA_TEST_SECRET" not in result.stdout
    assert "do-not-leak" not in result.stdout


def test_work_directories_are_removed():
    before = set(Path(tempfile.gettempdir()).glob("arena-sandbox-*"))
    for config in (AUTO, NONE):
        assert run_python("open('x', 'w').write('1')\n", config=config).passed
    assert set(Path(tempfile.gettempdir()).glob("arena-sandbox-*")) <= before


def test_an_interpreter_that_cannot_start_is_an_error_not_an_exception():
    result = run_python("print(1)", config=SandboxConfig(isolation="none", python="/nonexistent"))
    assert result.status is Status.ERROR
    assert not result.passed
