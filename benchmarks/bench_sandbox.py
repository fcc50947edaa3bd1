#!/usr/bin/env python
"""A sandboxed program's cost under bubblewrap against the hand-written sandbox it replaced.

Run from the repository root with the project's venv (needs git history and, for the old
sandbox's namespaces, root):

    .venv/bin/python benchmarks/bench_sandbox.py                 # 30 rounds
    .venv/bin/python benchmarks/bench_sandbox.py --rounds 10 --old-ref 1cdaf1c

The old implementation (``evaluations/sandbox.py`` and ``_launcher.py`` at ``--old-ref``,
unshare + pivot_root through ctypes) is taken from git into a temporary package and
imported beside the current one. The same programs run interleaved, round by round, as
(a) a bare ``python -I -S -c`` subprocess (this interpreter, and the one bubblewrap runs when
they differ: as root with pyenv under /root it is the system's), (b) the old sandbox (its strongest isolation
here), (c) the current sandbox under bubblewrap, (d) the current ``none`` opt-out. Two
programs: a trivial assert and HumanEval/0's canonical solution with its tests. Prints the
median and p90 wall time per run and the median's difference to the bare interpreter.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluations import humaneval as he  # noqa: E402
from evaluations.sandbox import SandboxConfig, run_python  # noqa: E402
from evaluations.sandbox import _interpreter as sandbox_interpreter  # noqa: E402

TRIVIAL = "assert sum(range(10)) == 45\n"
OLD_FILES = ("evaluations/sandbox.py", "evaluations/_launcher.py")
SANDBOX_PYTHON = sandbox_interpreter()[0]


def old_sandbox(ref: str, folder: Path):
    """The sandbox module as it was at ``ref``, importable as ``old_sandbox.sandbox``."""
    package = folder / "old_sandbox"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for path in OLD_FILES:
        text = subprocess.run(
            ["git", "show", f"{ref}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        (package / Path(path).name).write_text(text)
    sys.path.insert(0, str(folder))
    return importlib.import_module("old_sandbox.sandbox")


def bare(python: str, source: str) -> None:
    subprocess.run([python, "-I", "-S", "-c", source], capture_output=True, check=True)


def _passed(result) -> None:
    if not result.passed:
        raise RuntimeError(f"benchmark program failed: {result}")


def measure(ways: dict[str, Callable[[str], None]], programs: list[str], rounds: int):
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for source in programs:
            for name, run in ways.items():
                started = time.perf_counter()
                run(source)
                times[name].append(time.perf_counter() - started)
    return times


def table(times: dict[str, list[float]]) -> list[str]:
    bare = statistics.median(times["python -I -S -c"])
    rows = ["| way | median | p90 | median - bare |", "|---|---|---|---|"]
    for name, values in times.items():
        median = statistics.median(values)
        p90 = sorted(values)[int(0.9 * (len(values) - 1))]
        rows.append(
            f"| {name} | {1000 * median:.1f} ms | {1000 * p90:.1f} ms "
            f"| {1000 * (median - bare):+.1f} ms |"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--old-ref", default="1cdaf1c", help="a commit with the old sandbox")
    args = parser.parse_args()
    problem = next(p for p in he.load_problems() if p.task_id == "HumanEval/0")
    humaneval = he.build_program(problem, problem.prompt + problem.canonical_solution)
    with tempfile.TemporaryDirectory() as folder:
        old = old_sandbox(args.old_ref, Path(folder))
        old_mode = old.isolation_report().mode
        ways: dict[str, Callable[[str], None]] = {
            "python -I -S -c": lambda src: bare(sys.executable, src),
            f"{SANDBOX_PYTHON} -I -S -c (bubblewrap's interpreter)": lambda src: bare(
                SANDBOX_PYTHON, src
            ),
            f"old sandbox ({old_mode})": lambda src: _passed(old.run_python(src)),
            "bubblewrap": lambda src: _passed(run_python(src)),
            "isolation=none": lambda src: _passed(
                run_python(src, config=SandboxConfig(isolation="none"))
            ),
        }
        load = os.getloadavg()[0]
        results = {
            "trivial assert": measure(ways, [TRIVIAL], args.rounds),
            "HumanEval/0 with its tests": measure(ways, [humaneval], args.rounds),
        }
    print(
        f"{platform.processor() or platform.machine()}, nproc {os.cpu_count()}, Python "
        f"{platform.python_version()}, kernel {platform.release()}, uid {os.geteuid()}; "
        f"{args.rounds} rounds; 1-minute load {load:.2f} before, {os.getloadavg()[0]:.2f} after."
    )
    for name, times in results.items():
        print(f"\n{name}\n")
        print("\n".join(table(times)))


if __name__ == "__main__":
    main()
