#!/usr/bin/env python
"""Evaluation suites' speed: sandbox overhead per item and items/s of the pipelines on the stub.

Run from the repository root with the project's venv:

    .venv/bin/python benchmarks/bench_evaluations.py            # ~2 min on 2 cores
    .venv/bin/python benchmarks/bench_evaluations.py --quick    # fewer items
    .venv/bin/python benchmarks/bench_evaluations.py --no-docs  # print only

What one run does (all in this process and its children; no database):

1. **Sandbox overhead.** The same programs, interleaved round by round, as (a) a plain
   ``python -c`` subprocess (the reference), (b) ``python -I -S -c`` (the interpreter flags
   the sandbox uses), (c) ``evaluations.sandbox.run_python`` under bubblewrap (``bwrap``)
   and (d) with ``isolation="none"``. Two programs: a trivial assert, and
   real HumanEval test programs (canonical solution + tests). Median and p90 wall time per
   item; overhead = sandbox median minus reference median, and their ratio.
2. **Pipelines on the stub** (``tests/serving/stub_provider.py`` on a thread of this process,
   answering at once; calls through ``serving.providers.complete``, the arena's client):
   HumanEval (164 problems; the stub answers each with its canonical solution in prose and a
   fence), HumanEval-infilling random-span-light (164; the stub answers in the FiM prompt's
   ``<CODE>`` format, through ``serving.prompts``' clean-up), and the CodeArena judge (the
   12-question example set repeated to 120 questions; one answer and two judge calls each,
   no sandbox). Items per second at 1, 2 and 4 workers.
3. **Clean-up recovery** (no sandbox, no HTTP): on all 7,012 infilling holes, how often
   ``serving.prompts``' chat clean-up gives back exactly the reference middle, and how often the
   result is well-formatted, for a stub copying the prefix's last and the suffix's first line
   literally (even when blank) and for one following the prompt's rule (a blank line is
   replaced by the nearest non-blank one).

Writes the section "## Evaluations (issue 17)" of docs/performance.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena_site.settings")

import django  # noqa: E402

django.setup()

from evaluations import humaneval as he  # noqa: E402
from evaluations import infilling as inf  # noqa: E402
from evaluations import judge as j  # noqa: E402
from evaluations.questions import JudgeQuestion, load_questions  # noqa: E402
from evaluations.sandbox import SandboxConfig, isolation_report, run_python  # noqa: E402
from evaluations.wellformed import format_issues  # noqa: E402
from serving import prompts as serving_prompts  # noqa: E402
from tests.evaluations.provider_calls import provider_fn  # noqa: E402
from tests.serving.stub_provider import StubProvider  # noqa: E402

DOC = ROOT / "docs" / "performance.md"
SECTION = "## Evaluations (issue 17)"
TRIVIAL = "assert sum(range(10)) == 45\n"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def machine() -> dict[str, str]:
    model = platform.processor() or "unknown"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        model = next(
            (
                ln.split(":", 1)[1].strip()
                for ln in out.splitlines()
                if ln.startswith("Model name:")
            ),
            model,
        )
    except (OSError, subprocess.CalledProcessError):
        pass
    return {
        "cpu": model,
        "nproc": str(os.cpu_count()),
        "date": dt.date.today().isoformat(),
        "python": platform.python_version(),
        "kernel": platform.release(),
        "load": f"{os.getloadavg()[0]:.2f}",
    }


def _timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def sandbox_overhead(programs: list[str], rounds: int) -> dict[str, list[float]]:
    """Wall seconds per item for each way of running, interleaved so load hits all alike."""
    python = sys.executable
    ways: dict[str, Callable[[str], object]] = {
        "python -c (reference)": lambda src: subprocess.run(
            [python, "-c", src], capture_output=True, check=True
        ),
        "python -I -S -c": lambda src: subprocess.run(
            [python, "-I", "-S", "-c", src], capture_output=True, check=True
        ),
        "sandbox, bwrap": lambda src: _check(run_python(src)),
        "sandbox, isolation=none": lambda src: _check(
            run_python(src, config=SandboxConfig(isolation="none"))
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for src in programs:
            for name, run in ways.items():
                times[name].append(_timed(lambda run=run, src=src: run(src)))
    return times


def _check(result) -> None:
    if not result.passed:
        raise RuntimeError(f"benchmark program failed in the sandbox: {result}")


def overhead_rows(times: dict[str, list[float]]) -> list[str]:
    ref = statistics.median(times["python -c (reference)"])
    rows = []
    for name, values in times.items():
        med = statistics.median(values)
        rows.append(
            f"| {name} | {med * 1000:.1f} ms | {_quantile(values, 0.9) * 1000:.1f} ms | "
            f"{(med - ref) * 1000:+.1f} ms | {med / ref:.2f}x |"
        )
    return rows


def rate(fn: Callable[[], object], items: int) -> tuple[float, object]:
    started = time.perf_counter()
    out = fn()
    return items / (time.perf_counter() - started), out


def humaneval_on_stub(
    stub: StubProvider, problems: list[he.Problem], workers: int
) -> tuple[float, float]:
    stub.behave(
        "bench-coder",
        wrap="prose_fence",
        answers={p.prompt.rstrip()[-200:]: p.prompt + p.canonical_solution for p in problems},
    )
    chat = provider_fn(stub.base_url, "bench-coder", timeout=30)
    per_s, report = rate(lambda: he.run_suite(problems, chat, max_workers=workers), len(problems))
    return per_s, report.pass_at_1


def infilling_on_stub(
    stub: StubProvider, problems: list[inf.InfillProblem], workers: int
) -> tuple[float, float, float]:
    stub.behave(
        "bench-fim",
        answers={f"<PREFIX>{p.prompt}</PREFIX>": p.canonical_solution for p in problems},
    )
    complete = provider_fn(stub.base_url, "bench-fim", timeout=30)
    per_s, report = rate(
        lambda: inf.run_suite(
            problems, complete, chat=True, prompts=serving_prompts, max_workers=workers
        ),
        len(problems),
    )
    return per_s, report.pass_at_1, report.well_formatted_rate


def judge_on_stub(stub: StubProvider, questions: list[JudgeQuestion], workers: int) -> float:
    stub.behave("bench-model", answers={"": "GOOD answer"})
    stub.behave("bench-judge", judge="prefer:GOOD")
    model = provider_fn(stub.base_url, "bench-model", timeout=30)
    judge = provider_fn(stub.base_url, "bench-judge", timeout=30)
    baseline = {q.question_id: "baseline answer" for q in questions}
    per_s, _ = rate(
        lambda: j.run_suite(
            questions, model, judge, baseline_answers=baseline, max_workers=workers
        ),
        len(questions),
    )
    return per_s


def _literal(p: inf.InfillProblem) -> str:
    last = p.prompt.rsplit("\n", 1)[-1]
    first = p.suffix.split("\n", 1)[0]
    return f"<CODE>{last}{p.canonical_solution}{first}</CODE>"


def _following(p: inf.InfillProblem) -> str:
    lines = p.prompt.split("\n")
    last = lines[-1]
    if not last.strip():
        above = next((ln for ln in reversed(lines) if ln.strip()), None)
        last = f"{above}\n{last}" if above is not None else last
    lines = p.suffix.split("\n")
    first = lines[0]
    if not first.strip():
        below = next((ln for ln in lines if ln.strip()), None)
        first = f"{first}\n{below}" if below is not None else first
    return f"<CODE>{last}{p.canonical_solution}{first}</CODE>"


def recovery_rows() -> list[str]:
    rows = []
    for name in inf.SETS:
        problems = inf.load_problems(name)
        cells = [name, f"{len(problems):,}"]
        for answer in (_literal, _following):
            exact = formatted = 0
            for p in problems:
                middle = serving_prompts.clean_completion(
                    answer(p), chat=True, prefix=p.prompt, suffix=p.suffix, max_lines=None
                )
                exact += middle == p.canonical_solution
                formatted += not format_issues(
                    middle, prefix=p.prompt, suffix=p.suffix, reference=p.canonical_solution
                )
            cells += [f"{exact / len(problems):.1%}", f"{formatted / len(problems):.1%}"]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def commit() -> str:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "evaluations", "serving", "analysis"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return out.stdout.strip() + (" (with uncommitted changes)" if dirty else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    info = machine()
    report = isolation_report()
    problems = he.load_problems()
    light = inf.load_problems("random-span-light")
    questions = [
        JudgeQuestion(f"{q.question_id}-{k}", q.question, q.category)
        for k in range(10)
        for q in load_questions()
    ]
    if args.quick:
        problems, light, questions = problems[::8], light[::8], questions[:24]
    rounds = 2 if args.quick else 5
    log(f"isolation: {report.mode}; sandbox overhead ({rounds} rounds)")
    trivial = sandbox_overhead([TRIVIAL] * 6, rounds)
    programs = [he.build_program(p, p.prompt + p.canonical_solution) for p in problems[::16]]
    real = sandbox_overhead(programs, max(1, rounds // 2))

    pipeline = []
    with StubProvider(record=False) as stub:
        for workers in (1, 2, 4):
            log(f"pipelines, {workers} workers")
            he_rate, he_pass = humaneval_on_stub(stub, problems, workers)
            fim_rate, fim_pass, fim_wf = infilling_on_stub(stub, light, workers)
            judge_rate = judge_on_stub(stub, questions, workers)
            pipeline.append(
                f"| {workers} | {he_rate:.1f} (pass@1 {he_pass:.3f}) | "
                f"{fim_rate:.1f} (pass@1 {fim_pass:.3f}, well-formatted {fim_wf:.3f}) | "
                f"{judge_rate:.1f} |"
            )
    log("clean-up recovery")
    recovery = recovery_rows()
    info["load_after"] = f"{os.getloadavg()[0]:.2f}"

    text = "\n".join(
        [
            SECTION,
            "",
            f"Generated by `benchmarks/bench_evaluations.py` at commit {commit()} (code: `evaluations/`)."
            f" Machine: {info['cpu']}, nproc {info['nproc']}, Python {info['python']}, kernel"
            f" {info['kernel']}; run {info['date']}; 1-minute load average {info['load']} before the"
            f" run, {info['load_after']} after it (the machine is shared). Sandbox isolation here:"
            f" `{report.mode}`.{' (quick run)' if args.quick else ''}",
            "",
            f"Sandbox overhead per item, trivial program (`{TRIVIAL.strip()}`), "
            f"{len(trivial['python -c (reference)'])} items per way, interleaved:",
            "",
            "| way | median | p90 | overhead vs reference | ratio |",
            "|---|---|---|---|---|",
            *overhead_rows(trivial),
            "",
            f"The same with real HumanEval test programs (canonical solution + tests, "
            f"{len(programs)} problems, {len(real['python -c (reference)'])} items per way):",
            "",
            "| way | median | p90 | overhead vs reference | ratio |",
            "|---|---|---|---|---|",
            *overhead_rows(real),
            "",
            "Pipelines on the stub provider (answers at once; in this process), items per second:",
            "",
            f"| workers | HumanEval ({len(problems)} problems, sandboxed) | HumanEval-infilling "
            f"random-span-light ({len(light)}, sandboxed) | CodeArena judge ({len(questions)} "
            f"questions, 3 calls each, no sandbox) |",
            "|---|---|---|---|",
            *pipeline,
            "",
            "Chat clean-up (`serving.prompts.clean_completion`) on every infilling hole, for a "
            "stub answering with the reference middle between a copy of the prefix's last line "
            "and the suffix's first line: taken literally (blank lines copied as blank), or as "
            "the prompt asks (a blank line replaced by the nearest non-blank one):",
            "",
            "| set | holes | literal: exact middle | literal: well-formatted | as asked: exact "
            "middle | as asked: well-formatted |",
            "|---|---|---|---|---|---|",
            *recovery,
            "",
            "- Where a sandboxed run's time goes, beyond a bare `python -I -S -c` start: the"
            " launcher's imports (ctypes, json, and the modules preloaded for HumanEval programs:"
            " ~20 ms), one fork for the worker and, with namespaces, `unshare` (network, PID,"
            " mount, IPC, UTS) and the new root's bind mounts. The reference `python -c` loads"
            " the venv's site-packages, which `-I -S` skips.",
            "- Items/s include the stub and the client on the same cores; a real model's latency"
            " (0.5-5 s per answer) dominates a real run, so the useful number is the overhead"
            " per item, not the stub's rate. The judge rows make no sandbox runs: they measure"
            " three HTTP calls and the parsing per question.",
        ]
    )
    print(text)
    if not args.no_docs:
        write_section(text)
        log(f"wrote {SECTION!r} in {DOC}")


def write_section(section: str) -> None:
    """Replace (or append) only this benchmark's section of docs/performance.md."""
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Performance\n"
    pattern = re.compile(rf"^{re.escape(SECTION)}\n.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    DOC.write_text(text.rstrip("\n") + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
