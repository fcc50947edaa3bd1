#!/usr/bin/env python
"""Pair serving speed: server overhead of /create_pair and 200 concurrent pairs (issue 7).

Run from the repository root with the project's venv:

    .venv/bin/python benchmarks/bench_pair_serving.py            # full run, ~6 min
    .venv/bin/python benchmarks/bench_pair_serving.py --quick    # 1 repeat, short runs
    .venv/bin/python benchmarks/bench_pair_serving.py --configs gthread:2x128,gthread:1x256

What one run does:

1. Exports ``--ref`` (default HEAD) with ``git archive`` so the figures belong to a commit,
   re-creates the database ``arena_bench_pairs`` (``--db``), migrates it and adds four
   catalogue models with providers of all three kinds, all pointing at the stub provider
   (``tests/serving/stub_provider.py``, an asyncio HTTP server on loopback; each model
   answers after a fixed latency). Redis database 12 (``--redis-url``) holds the cache
   (throttle windows).
2. For each gunicorn configuration (``gthread:2x128`` = 2 workers of 128 threads), with
   the pair throttles raised to 1,000,000/min (the runs measure serving, not refusals):

   * overhead: stub latency 0; after a warm-up, ``--requests`` sequential POST
     /create_pair on one keep-alive connection. Per request, server overhead = wall time
     seen by the client minus the provider time the server reports (``latency`` of the
     slower item: the two calls run concurrently). Repeated ``--repeats`` times.
   * 200 concurrent: stub latency 1 s; wrk keeps 200 connections busy for
     ``--duration`` s (``--timeout 10s``), ``--repeats`` times. Errors are non-2xx
     responses plus socket errors and timeouts; afterwards every 2xx must have logged two
     successful served completions (CompletionLog) and nothing may have failed.
   * burst: 200 requests sent at the same instant (200 client threads behind a barrier).

   The stub provider, wrk, gunicorn, PostgreSQL and Redis share the machine's cores.
3. Prints the tables (medians over repeats) and writes them into the section
   "## Pair serving (issue 7)" of docs/performance.md (``--no-docs`` to skip; only that
   section is touched, re-read right before writing); raw figures to ``--json``.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from common import (
    DOC,
    GunicornConfig,
    add_service_options,
    django_env,
    drop_database,
    flush_redis,
    free_port,
    log,
    machine_info,
    machine_line,
    manage,
    parse_wrk,
    psql,
    recreate_database,
    run_wrk,
    snapshot_tree,
    start_gunicorn,
    start_process,
    stop_all,
    stop_process,
    total_cpu,
    tree_cpu_seconds,
    venv_python,
    wait_until_up,
    write_section,
)

SECTION = "## Pair serving (issue 7)"
OVERHEAD_TARGET_MS = 10.0
CONCURRENCY = 200
# Seconds for requests still in flight when wrk stops to finish and log (p99 is a few s).
SETTLE_SECONDS = 8

# Catalogue key -> (provider kind, remote name); every kind is exercised.
MODELS = {
    "gpt-4o-2024-08-06": ("openai_chat", "bench-gpt"),
    "claude-3-5-sonnet-20240620": ("openai_chat", "bench-claude"),
    "codestral-2405": ("mistral_fim", "bench-codestral"),
    "deepseek-coder-fim": ("openai_completion", "bench-deepseek"),
}

# A realistic request: ~2.4 KB of Python before the cursor, ~0.6 KB after.
PREFIX = (
    "import math\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass Circle:\n"
    "    r: float\n\n    def area(self) -> float:\n        return math.pi * self.r ** 2\n\n"
) * 8 + "def perimeter(c: Circle) -> float:\n    return "
SUFFIX = "\n\n\nif __name__ == '__main__':\n    print(perimeter(Circle(2.0)))\n" * 8


def pair_body(i: int = 0) -> dict:
    return {
        "pairId": f"bench-{i}",
        "userId": f"bench-user-{i % 50}",
        "prefix": PREFIX,
        "suffix": SUFFIX,
        "midSpan": False,
        "temperature": 0.5,
        "maxTokens": 512,
        "topP": 0.9,
        "maxLines": 20,
        "privacy": "Private",
        "modelTags": [],
    }


# --- setup ----------------------------------------------------------------------------


def server_env(src: Path, args: argparse.Namespace) -> dict[str, str]:
    return django_env(
        args.db,
        args.redis_url,
        src,
        THROTTLE_PAIR_IP="1000000/min",
        THROTTLE_PAIR_USER="1000000/min",
        BENCH_STUB_KEY="sk-bench-not-a-real-key",
    )


def set_up(src: Path, stub_url: str, args: argparse.Namespace) -> None:
    recreate_database(args.db)
    env = server_env(src, args)
    manage("migrate", "--noinput", env=env, src=src)
    code = (
        "from catalogue.models import ArenaModel\n"
        "from serving.models import ModelProvider\n"
        f"for key, (kind, remote) in {MODELS!r}.items():\n"
        "    m, _ = ArenaModel.objects.get_or_create(key=key, defaults={'display_name': key})\n"
        f"    ModelProvider.objects.create(model=m, kind=kind, base_url={stub_url!r}, remote_model=remote,\n"
        "        api_key_env='BENCH_STUB_KEY', timeout_seconds=10, max_concurrency=512)\n"
    )
    manage("shell", "-c", code, env=env, src=src)
    flush_redis(args.redis_url)


def start_stub(src: Path, latency: float, workdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    log_path = workdir / f"stub-{latency}.log"
    cmd = [venv_python(), "-m", "tests.serving.stub_provider", "--port", str(port)]
    proc = start_process(
        [*cmd, "--latency", str(latency)],
        env=dict(os.environ, PYTHONPATH=str(src)),
        cwd=src,
        log_path=log_path,
    )
    wait_until_up(port, proc=proc, log_path=log_path, timeout=30)
    return proc, port


@contextlib.contextmanager
def serving(
    src: Path, config: str, args: argparse.Namespace, workdir: Path, *, stub_latency: float
) -> Iterator[tuple[subprocess.Popen[bytes], subprocess.Popen[bytes], int]]:
    """A fresh database, the stub provider answering after `stub_latency` s, and gunicorn:
    (server, stub, server's port)."""
    stub, stub_port = start_stub(src, stub_latency, workdir)
    try:
        set_up(src, f"http://127.0.0.1:{stub_port}/v1", args)
        server, url = start_gunicorn(
            GunicornConfig.parse(config),
            src=src,
            env=server_env(src, args),
            log_path=workdir / f"gunicorn-{config}.log",
            extra=["--timeout", "60"],
        )
        try:
            yield server, stub, int(url.rsplit(":", 1)[1])
        finally:
            stop_process(server)
    finally:
        stop_process(stub)


# --- measurements -----------------------------------------------------------------------


def post_pair(conn: http.client.HTTPConnection, body: bytes) -> tuple[int, dict, float]:
    started = time.perf_counter()
    conn.request("POST", "/create_pair", body=body, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    wall = time.perf_counter() - started
    return response.status, json.loads(data), wall


def in_threads(target: Callable[[], None], n: int) -> None:
    threads = [threading.Thread(target=target) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def warm_up(port: int, n: int) -> None:
    """Every worker process and its engine and DB threads started, catalogue loaded."""

    def one() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for i in range(n):
            status, body, _ = post_pair(conn, json.dumps(pair_body(i)).encode())
            if status != 200:
                raise SystemExit(f"warm-up request failed: {status} {body}")
        conn.close()

    in_threads(one, 8)


def measure_overhead(port: int, requests: int) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    body = json.dumps(pair_body()).encode()
    overhead, wall_ms, provider_ms = [], [], []
    for _ in range(requests):
        status, data, wall = post_pair(conn, body)
        if status != 200:
            raise SystemExit(f"overhead request failed: {status} {data}")
        provider = max(item["latency"] for item in data["completionItems"])
        overhead.append((wall - provider) * 1000.0)
        wall_ms.append(wall * 1000.0)
        provider_ms.append(provider * 1000.0)
    conn.close()
    return {
        "p50_ms": quantile(overhead, 0.5),
        "p90_ms": quantile(overhead, 0.9),
        "p99_ms": quantile(overhead, 0.99),
        "wall_p50_ms": quantile(wall_ms, 0.5),
        "provider_p50_ms": quantile(provider_ms, 0.5),
        "requests": requests,
    }


WRK_LUA = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = assert(io.open(os.getenv("PAIR_BODY_FILE"), "r"))
wrk.body = f:read("*a")
f:close()
"""


def wrk_pairs(port: int, duration: int, workdir: Path) -> dict:
    lua = workdir / "pairs.lua"
    lua.write_text(WRK_LUA)
    body_file = workdir / "pair.json"
    body_file.write_text(json.dumps(pair_body()))
    out = run_wrk(
        f"http://127.0.0.1:{port}/create_pair",
        connections=CONCURRENCY,
        seconds=duration,
        timeout="10s",
        script=lua,
        env=dict(os.environ, PAIR_BODY_FILE=str(body_file)),
    )
    return {**parse_wrk(out), "raw": out}


def burst(port: int, n: int) -> dict:
    """n requests released at once, each on its own connection."""
    barrier = threading.Barrier(n)
    results: list[tuple[int, float]] = []
    lock = threading.Lock()
    body = json.dumps(pair_body()).encode()

    def one() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.connect()
        barrier.wait(30)
        try:
            status, _, wall = post_pair(conn, body)
        except Exception:  # any failure counts as an error
            status, wall = 0, 0.0
        with lock:
            results.append((status, wall))
        conn.close()

    in_threads(one, n)
    walls = [w for s, w in results if s == 200]
    return {
        "ok": len(walls),
        "errors": n - len(walls),
        "p50_s": quantile(walls, 0.5) if walls else None,
        "max_s": max(walls) if walls else None,
    }


def completion_counts(db: str) -> tuple[int, int]:
    ok = int(psql(db, "SELECT count(*) FROM ingest_completionlog WHERE served_by_us AND succeeded"))
    failed = int(psql(db, "SELECT count(*) FROM ingest_completionlog WHERE NOT succeeded"))
    return ok, failed


def pg_connections(db: str) -> int:
    return int(psql("postgres", f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{db}'"))


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def median(values: list[float]) -> float:
    return statistics.median(values)


# --- one configuration ------------------------------------------------------------------


def bench_config(src: Path, config: str, args, workdir: Path) -> dict:
    result: dict = {"config": config}

    log(f"{config}: overhead (stub latency 0)")
    with serving(src, config, args, workdir, stub_latency=0.0) as (_, _, port):
        warm_up(port, 25)
        runs = [measure_overhead(port, args.requests) for _ in range(args.repeats)]
    result["overhead_runs"] = runs
    result["overhead"] = {k: median([r[k] for r in runs]) for k in runs[0]}
    log(
        f"  overhead p50 {result['overhead']['p50_ms']:.2f} ms, p99 {result['overhead']['p99_ms']:.2f} ms"
    )

    log(f"{config}: {CONCURRENCY} concurrent (stub latency 1 s)")
    with serving(src, config, args, workdir, stub_latency=1.0) as (server, stub, port):
        warm_up(port, 3)
        wrk_pairs(port, 3, workdir)  # every thread, connection and DB thread started
        time.sleep(SETTLE_SECONDS)
        runs = []
        for i in range(args.repeats):
            before_ok, before_failed = completion_counts(args.db)
            cpu_server, cpu_stub = tree_cpu_seconds(server.pid), tree_cpu_seconds(stub.pid)
            busy0, total0 = total_cpu()
            run = wrk_pairs(port, args.duration, workdir)
            busy1, total1 = total_cpu()
            run["connections_during"] = pg_connections(args.db)
            time.sleep(SETTLE_SECONDS)  # requests in flight when wrk stopped finish
            after_ok, after_failed = completion_counts(args.db)
            run["logged_ok"] = after_ok - before_ok
            run["logged_failed"] = after_failed - before_failed
            run["cpu_server_s"] = tree_cpu_seconds(server.pid) - cpu_server
            run["cpu_stub_s"] = tree_cpu_seconds(stub.pid) - cpu_stub
            run["machine_busy"] = (busy1 - busy0) / max(total1 - total0, 1)
            runs.append(run)
            log(
                f"  run {i + 1}: {run['requests']} pairs, {run['rps']:.0f}/s, p50 {run['p50_s']:.3f} s, "
                f"p99 {run['p99_s']:.3f} s, errors {run['non_2xx'] + run['socket_errors']}, "
                f"logged {run['logged_ok']} ok / {run['logged_failed']} failed"
            )
        result["burst"] = burst(port, CONCURRENCY)
        log(f"  burst of {CONCURRENCY}: {result['burst']}")
    result["concurrent_runs"] = [{k: v for k, v in r.items() if k != "raw"} for r in runs]
    keys = [
        "requests",
        "rps",
        "p50_s",
        "p75_s",
        "p90_s",
        "p99_s",
        "cpu_server_s",
        "cpu_stub_s",
        "machine_busy",
        "connections_during",
    ]
    result["concurrent"] = {k: median([r[k] for r in runs]) for k in keys}
    result["concurrent"]["errors"] = sum(r["non_2xx"] + r["socket_errors"] for r in runs)
    result["concurrent"]["requests_total"] = sum(r["requests"] for r in runs)
    result["concurrent"]["logged_failed"] = sum(r["logged_failed"] for r in runs)
    # Each answered pair logs two successful completions (pairs still in flight when wrk
    # stopped log theirs too, so up to 2 x CONCURRENCY more), and no call failed.
    result["concurrent"]["logs_match"] = all(
        2 * r["requests"] <= r["logged_ok"] <= 2 * (r["requests"] + CONCURRENCY)
        and r["logged_failed"] == 0
        for r in runs
    )
    return result


# --- report -------------------------------------------------------------------------------


def report(results: list[dict], *, commit: str, args, load_start: float) -> str:
    info = machine_info()
    load_end = os.getloadavg()[0]
    lines = [
        SECTION,
        "",
        f"Generated by `benchmarks/bench_pair_serving.py` at commit {commit} (code: `serving/`).",
        f"Machine: {machine_line(info)}; run {info['day']}; 1-minute load average {load_start:.2f} before the "
        f"run, {load_end:.2f} right after it (this run's own processes included; the machine is "
        "shared, so other jobs may have taken some of the cores). PostgreSQL and "
        "Redis on loopback, the stub provider (`tests/serving/stub_provider.py`, asyncio) and the "
        "load generator on the same cores. Four models with providers of all three kinds; "
        f"requests as the extension sends them (~{len(PREFIX) / 1024:.1f} KB prefix, "
        f"~{len(SUFFIX) / 1024:.1f} KB suffix, Private); pair throttles raised for the runs. "
        f"Medians of {args.repeats} repeats.",
        "",
        "Server overhead of `/create_pair` = wall time seen by the client minus the slower "
        f"provider call as the server timed it (stub answering at once; {args.requests} sequential "
        "requests on one keep-alive connection per repeat):",
        "",
        "| server | overhead p50 | p90 | p99 | wall p50 | provider p50 | target p50 |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        o = r["overhead"]
        ok = "met" if o["p50_ms"] < OVERHEAD_TARGET_MS else "MISSED"
        lines.append(
            f"| {describe(r['config'])} | {o['p50_ms']:.2f} ms | {o['p90_ms']:.2f} ms | "
            f"{o['p99_ms']:.2f} ms | {o['wall_p50_ms']:.2f} ms | {o['provider_p50_ms']:.2f} ms | "
            f"< {OVERHEAD_TARGET_MS:.0f} ms: {ok} |"
        )
    lines += [
        "",
        f"{CONCURRENCY} concurrent pair requests, stub provider answering every call after 1 s "
        f"(wrk, {CONCURRENCY} keep-alive connections, {args.duration} s per repeat, 10 s timeout):",
        "",
        "| server | pairs/s | wall p50 | p90 | p99 | errors (all repeats) | failed calls logged | server CPU / 1k pairs | machine busy | DB connections |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        c = r["concurrent"]
        cpu_per_k = 1000.0 * c["cpu_server_s"] / max(c["requests"], 1)
        lines.append(
            f"| {describe(r['config'])} | {c['rps']:.0f} | {c['p50_s']:.3f} s | {c['p90_s']:.3f} s | "
            f"{c['p99_s']:.3f} s | {c['errors']} of {c['requests_total']:,} | {c['logged_failed']} | "
            f"{cpu_per_k:.1f} s | {100 * c['machine_busy']:.0f}% | {c['connections_during']:.0f} |"
        )
    lines.append("")
    for r in results:
        b = r["burst"]
        lines.append(
            f"- Burst on {describe(r['config'])}: {CONCURRENCY} requests released at once: "
            f"{b['ok']} answered, {b['errors']} errors, median {b['p50_s']:.3f} s, slowest {b['max_s']:.3f} s."
        )
    lines += [
        "- Every answered pair logged two successful served completions: "
        + ("yes." if all(r["concurrent"]["logs_match"] for r in results) else "NO (see --json)."),
        "- Configuration: `gunicorn arena_site.wsgi --worker-class gthread --workers W --threads T` "
        "(Django views stay synchronous). Each worker process runs one asyncio loop thread that "
        "makes every provider call through small keep-alive httpx pools per provider "
        "(`serving/engine.py`); a request's thread only waits on it. Database connections come "
        "from a psycopg pool per process (`DATABASE_POOL_SIZE`), so waiting requests hold none "
        "(the DB connections column counts all of them during a run).",
        "- Server CPU / 1k pairs is the CPU time of gunicorn's processes per 1,000 answered pairs; "
        "machine busy is the whole machine's CPU use during the runs (stub, wrk, PostgreSQL, "
        "Redis and anything else running included). 200 concurrent requests on 1-second providers "
        "ask for up to 200 pairs/s; the server's CPU per pair bounds what two cores deliver, and "
        "the remainder queues (mean wall time = 200 / pairs per second).",
        "",
    ]
    return "\n".join(lines)


def describe(config: str) -> str:
    c = GunicornConfig.parse(config)
    if c.worker_class == "gthread":
        return f"gunicorn gthread {c.workers} workers x {c.threads} threads"
    return f"gunicorn {c.worker_class} {c.workers} workers"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--ref", default="HEAD", help="git ref to benchmark (exported with git archive)"
    )
    parser.add_argument("--src", type=Path, help="benchmark this source tree instead of --ref")
    parser.add_argument("--configs", default="gthread:2x128")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--requests", type=int, default=1000, help="sequential requests per overhead repeat"
    )
    parser.add_argument("--duration", type=int, default=20, help="seconds per concurrent repeat")
    parser.add_argument("--quick", action="store_true", help="1 repeat, 200 requests, 8 s")
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--json", type=Path)
    add_service_options(parser, db="arena_bench_pairs", redis_db=12)
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.requests, args.duration = 1, 200, 8
    # SIGTERM runs the finally below (the servers we started are in their own sessions).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed (apt-get install wrk)")

    if args.src:
        src, commit = args.src.resolve(), "working tree"
    else:
        src, commit = snapshot_tree(args.ref, prefix="bench_pairs")
    workdir = Path(tempfile.mkdtemp(prefix="bench_pairs_run_"))
    load_start = os.getloadavg()[0]
    log(f"source {src} ({commit}); logs in {workdir}; load average {load_start:.2f}")
    results = []
    try:
        for config in args.configs.split(","):
            results.append(bench_config(src, config, args, workdir))
    finally:
        stop_all()
        drop_database(args.db)
        if not args.src:
            shutil.rmtree(src, ignore_errors=True)
    text = report(results, commit=commit, args=args, load_start=load_start)
    print("\n" + text)
    if args.json:
        args.json.write_text(
            json.dumps({"commit": commit, "results": results}, indent=2, default=str)
        )
    if not args.no_docs:
        write_section(text)
        log(f"wrote {SECTION!r} in {DOC}")


if __name__ == "__main__":
    main()
