#!/usr/bin/env python
"""Stored evaluation runs through Celery: overhead per item and runs/s, on the stub (issue 17).

Run from the repository root with the project's venv (PostgreSQL and Redis up):

    .venv/bin/python benchmarks/bench_evaluation_runs.py            # ~4 min on 2 cores
    .venv/bin/python benchmarks/bench_evaluation_runs.py --quick    # fewer items and rounds

``benchmarks/bench_evaluations.py`` measures the suites as pure pipelines (and the sandbox);
this script measures what the Django app adds on top. What one run does:

1. Re-creates the database ``arena_bench_evaluations`` (``--db``) and flushes the Redis
   database (``--redis-url``, default 6), migrates, starts the stub provider
   (``tests/serving/stub_provider.py``, answering at once) on a thread of this process and a
   ``celery worker --pool=solo`` on a private queue.
2. Three ways of running the same items, interleaved round by round (``--rounds``), with
   1 and 4 lanes (threads) each:

   * **reference**: the pure pipeline in this process (``humaneval.run_suite`` /
     ``judge.run_suite`` over ``serving.providers``; no database, no Celery);
   * **driver here**: a stored run (``services.create_run``) worked off by
     ``driver.drive`` in this process: claims, leases, results and counters in PostgreSQL,
     the per-provider Redis semaphore around each call, the summary and the external board;
   * **through Celery**: the same stored run queued with ``services.start_run`` and worked
     off by the worker; timed from the queueing to the run's ``done`` (polled every 20 ms).

   HumanEval: the first ``--items`` problems, answered with their canonical solutions
   (every item runs in the sandbox). CodeArena judge: ``--questions`` questions (the
   example set repeated) with the set's own baseline answers: three calls per question and
   no sandbox, so the app's own per-item cost is most visible there.
3. Runs/s: ``--runs`` one-item judge runs queued at once, timed until all are done (one
   solo worker).

Writes the section "## Evaluation runs through Celery (issue 17)" of docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from common import (  # noqa: E402
    add_service_options,
    django_env,
    flush_redis,
    log,
    machine_info,
    machine_line,
    manage,
    pg_url,
    recreate_database,
    start_process,
    stop_all,
    venv_python,
    write_section,
)

SECTION = "## Evaluation runs through Celery (issue 17)"
WAYS = ("reference", "driver here", "through Celery")


def setup_django(db: str, redis_url: str) -> None:
    os.environ.update(
        DATABASE_URL=pg_url(db),
        REDIS_URL=redis_url,
        SECRET_KEY="bench",
        USER_ID_HMAC_KEY="bench",
        DEBUG="0",
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena_site.settings")
    import django

    django.setup()


def wait_done(run_ids: list[int], timeout: float = 900.0) -> None:
    from evaluations.models import EvaluationRun

    deadline = time.monotonic() + timeout
    while EvaluationRun.objects.filter(pk__in=run_ids).exclude(status="done").exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"runs {run_ids} not done within {timeout:g} s")
        time.sleep(0.02)


def start_worker(env: dict[str, str], log_dir: Path) -> str:
    from arena_site.celery import app

    queue = f"bench-eval-{uuid.uuid4().hex[:8]}"
    app.conf.task_default_queue = queue
    cmd = [venv_python(), "-m", "celery", "-A", "arena_site", "worker", "--pool=solo"]
    cmd += ["-Q", queue, "--loglevel=WARNING"]
    start_process(
        cmd, env={**env, "CELERY_QUEUE": queue}, cwd=ROOT, log_path=log_dir / "worker.log"
    )
    deadline = time.monotonic() + 120
    while not app.control.ping(timeout=1.0):
        if time.monotonic() > deadline:
            raise SystemExit(f"the worker did not start; see {log_dir / 'worker.log'}")
    return queue


def question_file(path: Path, n: int) -> Path:
    from evaluations.questions import load_questions

    base = load_questions()
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            q = base[i % len(base)]
            row = {"id": f"{q.question_id}-{i}", "question": q.question, "category": q.category}
            out.write(json.dumps({**row, "baseline_answer": "baseline answer"}) + "\n")
    return path


def measure(args: argparse.Namespace, stub) -> dict[tuple[str, int, str], list[float]]:
    from evaluations import driver, services
    from evaluations import humaneval as he
    from evaluations import judge as jd
    from evaluations.models import Question, Suite
    from serving.models import ModelProvider
    from tests.evaluations.provider_calls import provider_fn
    from tests.evaluations.scripts import humaneval_answers
    from tests.factories import ArenaModelFactory

    def model(key: str):
        m = ArenaModelFactory(key=key)
        ModelProvider.objects.create(
            model=m, kind="openai_chat", base_url=stub.base_url, remote_model=key
        )
        return m

    problems = he.load_problems()[: args.items]
    stub.behave("coder", answers=humaneval_answers({i: None for i in range(len(problems))}))
    stub.behave("answerer", answers={"": "GOOD answer"})
    stub.behave("judge", judge="prefer:GOOD")
    coder, answerer, judge = model("coder"), model("answerer"), model("judge")
    with tempfile.TemporaryDirectory() as tmp:
        services.import_question_set(
            name="bench", path=question_file(Path(tmp) / "q.jsonl", args.questions)
        )
    questions = [
        jd.JudgeQuestion(q.question_id, q.question, q.category or None, baseline_answer="b")
        for q in Question.objects.filter(question_set__name="bench").order_by("position")
    ]

    def reference(suite: str, lanes: int) -> Callable[[], object]:
        if suite == "humaneval":
            chat = provider_fn(stub.base_url, "coder", timeout=60)
            return lambda: he.run_suite(problems, chat, max_workers=lanes)
        m, j = (provider_fn(stub.base_url, k, timeout=60) for k in ("answerer", "judge"))
        return lambda: jd.run_suite(questions, m, j, max_workers=lanes)

    def stored(suite: str, lanes: int, celery: bool) -> Callable[[], object]:
        kwargs = (
            {"suite": Suite.HUMANEVAL, "model": coder, "limit": args.items}
            if suite == "humaneval"
            else {"suite": Suite.CODEARENA, "model": answerer, "judge_model": judge}
            | {"dataset": "bench"}
        )

        def go() -> None:
            run = services.create_run(concurrency=lanes, **kwargs)
            if celery:
                services.start_run(run)
                wait_done([run.pk])
            elif driver.drive(run.pk) != "done":
                raise SystemExit(f"run {run.pk} did not finish")

        return go

    log("warm-up (the worker's first run loads the data and probes the sandbox)")
    for celery in (False, True):
        run = services.create_run(suite=Suite.HUMANEVAL, model=coder, limit=2)
        if celery:
            services.start_run(run)
            wait_done([run.pk])
        else:
            driver.drive(run.pk)
    times: dict[tuple[str, int, str], list[float]] = {}
    for r in range(args.rounds):
        for suite in ("humaneval", "codearena"):
            for lanes in (1, 4):
                log(f"round {r + 1}/{args.rounds}: {suite}, {lanes} lane(s)")
                ways = {
                    "reference": reference(suite, lanes),
                    "driver here": stored(suite, lanes, celery=False),
                    "through Celery": stored(suite, lanes, celery=True),
                }
                for way, fn in ways.items():
                    started = time.perf_counter()
                    fn()
                    times.setdefault((suite, lanes, way), []).append(time.perf_counter() - started)
    return times


def runs_per_second(n: int) -> float:
    from catalogue.models import ArenaModel
    from evaluations import services
    from evaluations.models import Suite

    answerer, judge = ArenaModel.objects.get(key="answerer"), ArenaModel.objects.get(key="judge")
    started = time.perf_counter()
    ids = []
    for _ in range(n):
        run = services.create_run(
            suite=Suite.CODEARENA, model=answerer, judge_model=judge, dataset="bench", limit=1
        )
        services.start_run(run)
        ids.append(run.pk)
    wait_done(ids)
    return n / (time.perf_counter() - started)


def table(times: dict[tuple[str, int, str], list[float]], items: dict[str, int]) -> list[str]:
    rows = []
    for suite, label in (("humaneval", "HumanEval"), ("codearena", "CodeArena judge")):
        n = items[suite]
        for lanes in (1, 4):
            ref = statistics.median(times[(suite, lanes, "reference")])
            for way in WAYS:
                med = statistics.median(times[(suite, lanes, way)])
                extra = (med - ref) / n * 1000
                rows.append(
                    f"| {label} ({n} items) | {lanes} | {way} | {med:.2f} s | {n / med:.1f} | "
                    f"{extra:+.1f} ms | {med / ref:.2f}x |"
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_service_options(parser, db="arena_bench_evaluations", redis_db=6)
    parser.add_argument("--items", type=int, default=40, help="HumanEval problems per run")
    parser.add_argument("--questions", type=int, default=60, help="judge questions per run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=20, help="one-item runs for runs/s")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.items, args.questions, args.rounds, args.runs = 12, 24, 1, 8
    info = machine_info({"Celery": "celery", "Django": "Django"})
    load_before = os.getloadavg()[0]
    recreate_database(args.db)
    flush_redis(args.redis_url)
    env = django_env(args.db, args.redis_url)
    log(f"migrating {args.db}")
    manage("migrate", "--noinput", env=env)
    setup_django(args.db, args.redis_url)
    from evaluations.sandbox import isolation_report
    from tests.serving.stub_provider import StubProvider

    with tempfile.TemporaryDirectory() as tmp, StubProvider(record=False) as stub:
        try:
            start_worker(env, Path(tmp))
            times = measure(args, stub)
            log(f"runs/s: {args.runs} one-item runs")
            rate = runs_per_second(args.runs)
        finally:
            stop_all()
    load_after = os.getloadavg()[0]
    items = {"humaneval": args.items, "codearena": args.questions}
    text = "\n".join(
        [
            SECTION,
            "",
            f"Generated by `benchmarks/bench_evaluation_runs.py` on {info['date']}. Machine: "
            f"{machine_line(info)}, kernel {info['kernel']}; 1-minute load average "
            f"{load_before:.2f} before the run, {load_after:.2f} after it (the machine is "
            f"shared). Sandbox isolation: `{isolation_report().mode}`. Stub provider answering "
            f"at once; one `celery worker --pool=solo`; PostgreSQL and Redis on the same "
            f"machine. Medians of {args.rounds} interleaved round(s)."
            + (" (quick run)" if args.quick else ""),
            "",
            "| suite | lanes | way | wall per run | items/s | extra per item vs reference | "
            "ratio |",
            "|---|---|---|---|---|---|---|",
            *table(times, items),
            "",
            f"Runs/s: {rate:.2f} one-item CodeArena runs per second ({args.runs} queued at "
            "once, one solo worker): the fixed cost of a run (creating it and its item, the "
            "task, the heartbeat thread, the summary, rebuilding the external board and "
            "queueing the correlations).",
            "",
            "- *reference*: the pure suite in this process (no database); *driver here*: the "
            "stored run worked off in this process (claims, leases, results, counters, the "
            "Redis semaphore, summary, board); *through Celery*: the same queued and run by "
            "the worker, timed from queueing to `done`.",
            "- A real model answers in 0.5-5 s: per-item costs of a few milliseconds are "
            "lost in that; the lanes (and the provider's limit) set the pace.",
        ]
    )
    print(text)
    if not args.no_docs:
        write_section(text)
        log(f"wrote {SECTION!r}")


if __name__ == "__main__":
    main()
