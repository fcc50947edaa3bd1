#!/usr/bin/env python
"""Evaluation runs against a real model behind an OpenAI-compatible server (issue 17).

Run from the repository root with the project's venv (PostgreSQL and Redis up), once a
server answers, e.g. llama.cpp's ``llama-server -m model.gguf --port 8090``:

    .venv/bin/python benchmarks/bench_real_model.py --url http://127.0.0.1:8090/v1 \\
        --name gemma-3-270m-q4_k_m --limit 20

Re-creates the database ``arena_bench_real_model`` (``--db``), adds one catalogue model whose
provider is the server (``--kind``, default ``openai_chat``), and works off one stored run per
suite (``--suites``, default HumanEval and HumanEval-infilling random-span-light; the first
``--limit`` items) with ``driver.drive`` in this process, ``--lanes`` at a time. Per suite it
reports the score, the outcomes, the call latency (median and p90 over items), the
completion tokens per second the server reported, and the wall time per item against the
median call latency (what the app and the sandbox add).

Writes the section "## Evaluations on a real model (issue 17)" of docs/performance.md
(``--no-docs`` to skip), with ``--note`` (how the server and model were obtained) in it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
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
    write_section,
)

SECTION = "## Evaluations on a real model (issue 17)"


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def row(run) -> str:
    """One run's line of the table."""
    run.refresh_from_db()
    wall = (run.finished_at - run.started_at).total_seconds()
    latencies = [x for x in run.items.values_list("latency_s", flat=True) if x is not None]
    # Only answered calls report tokens: divide by their time alone.
    answered = run.items.exclude(outcome="provider_error").values_list("latency_s", flat=True)
    answering = sum(x for x in answered if x is not None)
    per_s = run.completion_tokens / answering if answering and run.calls_with_usage else None
    extra = ""
    if run.suite == "infilling":
        extra = f"; well-formatted {run.summary.get('well_formatted_rate') or 0:.1f}%"
        extra += f" of {run.summary.get('answered')} answered, issues {run.summary.get('issues')}"
    score = "-" if run.score is None else f"{run.score:.1f}%"
    return (
        f"| {run.get_suite_display()} ({run.dataset}, first {run.total}) | {run.status} | "
        f"{score}{extra} | {run.summary.get('statuses')} | "
        f"{statistics.median(latencies):.2f} s / {quantile(latencies, 0.9):.2f} s | "
        + (f"{per_s:.2f}" if per_s is not None else "not reported")
        + f" | {wall / run.total:.1f} s |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_service_options(parser, db="arena_bench_real_model", redis_db=6)
    parser.add_argument("--url", required=True, help="the server's base URL, up to /v1")
    parser.add_argument("--name", required=True, help="remote model name (and catalogue key)")
    parser.add_argument("--kind", default="openai_chat")
    parser.add_argument("--suites", default="humaneval,infilling")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--lanes", type=int, default=1)
    parser.add_argument("--note", default="", help="where the server and model came from")
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="no new runs: report the runs already in --db (e.g. to add --note afterwards)",
    )
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    info = machine_info({"Django": "Django"})
    if not args.report_only:
        recreate_database(args.db)
        flush_redis(args.redis_url)
        manage("migrate", "--noinput", env=django_env(args.db, args.redis_url))
    os.environ.update(
        DATABASE_URL=pg_url(args.db),
        REDIS_URL=args.redis_url,
        SECRET_KEY="bench",
        USER_ID_HMAC_KEY="bench",
        DEBUG="0",
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena_site.settings")
    import django

    django.setup()
    from catalogue.models import ArenaModel
    from evaluations import driver, services
    from evaluations.models import EvaluationRun
    from evaluations.sandbox import isolation_report
    from serving.models import ModelProvider

    load_before = os.getloadavg()[0]
    if args.report_only:
        runs = list(EvaluationRun.objects.filter(model__key=args.name).order_by("id"))
    else:
        model = ArenaModel.objects.create(
            key=args.name, display_name=args.name, visibility="private"
        )
        ModelProvider.objects.create(
            model=model, kind=args.kind, base_url=args.url, remote_model=args.name
        )
        runs = []
        for suite in args.suites.split(","):
            run = services.create_run(
                suite=suite, model=model, limit=args.limit, concurrency=args.lanes
            )
            log(f"{suite}: {run.total} items")
            driver.drive(run.pk)
            runs.append(run)
    rows = [row(run) for run in runs]
    ran = min(r.started_at for r in runs).strftime("%Y-%m-%d %H:%M UTC") if runs else "-"
    when = "when this report was made" if args.report_only else "at the start"
    text = "\n".join(
        [
            SECTION,
            "",
            f"Generated by `benchmarks/bench_real_model.py`; runs of {ran}. Machine: "
            f"{machine_line(info)}, kernel {info['kernel']}, no GPU; 1-minute load average "
            f"{load_before:.2f} {when} (the machine is shared). Model `{args.name}` "
            f"behind `{args.url}` ({args.kind}), {args.lanes} lane(s), greedy decoding; "
            f"sandbox isolation `{isolation_report().mode}`. {args.note}",
            "",
            "| suite | status | score | outcomes | call latency median / p90 | completion "
            "tokens/s (reported) | wall per item |",
            "|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
    print(text)
    if not args.no_docs:
        write_section(text)
        log(f"wrote {SECTION!r}")


if __name__ == "__main__":
    main()
