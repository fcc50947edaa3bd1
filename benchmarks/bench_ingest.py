#!/usr/bin/env python
"""Ingest throughput and latency: gunicorn + PostgreSQL on loopback, driven by wrk (issue 2).

Run from the repository root with the project's venv:

    .venv/bin/python benchmarks/bench_ingest.py                 # full run, 35-55 min
    .venv/bin/python benchmarks/bench_ingest.py --quick         # 1 repeat x 5 s, smoke test
    .venv/bin/python benchmarks/bench_ingest.py --configs sync:4 --repeats 5
    .venv/bin/python benchmarks/bench_ingest.py --src . --no-docs   # the working tree
    .venv/bin/python benchmarks/bench_ingest.py --env CONN_HEALTH_CHECKS=0 --no-docs

By default the code measured is a ``git archive`` snapshot of HEAD (``--ref``) in a
temporary directory, so the figures belong to a commit and half-finished edits in the
working tree cannot break a run; ``--src DIR`` measures a tree as it is (a scratch copy
with a proposed patch, or ``.``).

What one run does:

1. Drops and re-creates the database ``arena_bench`` (``--db``), runs ``migrate`` and
   ``seed_catalogue``, issues an API key through ``core.services.issue_api_key`` and
   flushes Redis database 14 (``--redis-url``; the cache holding throttle windows and
   key-usage counters).
2. For every gunicorn configuration (``--configs``; ``sync:4`` = 4 sync workers,
   ``gthread:2x8`` = 2 workers of 8 threads) starts ``gunicorn arena_site.wsgi`` on a free
   loopback port with DATABASE_URL / REDIS_URL / SECRET_KEY=bench / USER_ID_HMAC_KEY=bench / DEBUG=0 and the
   anonymous vote throttles raised to 1,000,000/min (so the anonymous runs measure the
   throttle's cost, not its refusals), warms every worker up (the natural-language
   detector loads its models on first use) and runs each scenario with wrk
   (``benchmarks/wrk/ingest.lua``):

   * ``native``      POST /api/v1/battles, Private, no code fields, API key
   * ``native+code`` the same with a ~2 KB prefix and ~2 KB suffix (still Private:
     code is only read to compute the slice labels)
   * ``native anon`` the first one without a key, throttles on (raised)
   * ``extension``   PUT /add_completion_outcome, the extension's payload, anonymous
   * ``batch``       POST /api/v1/battles/batch, 500 battles a request, API key

   No Celery worker runs: the vote trigger's cost (scheduling a debounced recompute) is
   measured, the recompute itself is not.
   Before each run the script waits (up to ``--quiet-timeout`` s) until other processes
   use at most ``--quiet-cores`` cores, since the machine may be shared; the CPU other
   processes used during each run is reported as "other".
   Scenarios are interleaved over the repeats (run 1 of each, then run 2 of each, ...)
   so slow drifts of the machine hit all of them alike; the table shows medians.
   After every run the rows stored in ``ingest_battle`` are counted and compared with the
   2xx responses wrk saw: a request still in flight when wrk stops is stored but not
   counted, so the check is ``2xx <= stored <= sent`` and ``non-2xx == 0``.
3. Measures PostgreSQL's own single-row insert rate with pgbench: a table created
   ``LIKE ingest_battle INCLUDING ALL`` (plus its foreign keys), one INSERT a
   transaction, 32 clients.
4. Prints the table and writes it into the section "## Ingest throughput (issue 2)" of
   docs/performance.md (``--no-docs`` to skip), raw figures to ``--json``.

wrk and gunicorn share the machine's cores with PostgreSQL and Redis, as they would on a
single small host; the table shows how the CPU time was split.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from common import (
    DOC,
    PG_HOST,
    PG_PORT,
    PG_USER,
    ROOT,
    GunicornConfig,
    add_service_options,
    child_pids,
    django_env,
    drop_database,
    flush_redis,
    log,
    machine_info,
    machine_line,
    manage,
    named_pids,
    proc_cpu,
    psql,
    recreate_database,
    run_wrk,
    snapshot_tree,
    start_gunicorn,
    stop_all,
    stop_process,
    total_cpu,
    venv_python,
    wait_for_quiet,
    write_section,
)

LUA = ROOT / "benchmarks" / "wrk" / "ingest.lua"
SECTION = "## Ingest throughput (issue 2)"
TARGET_SINGLE_RPS, TARGET_SINGLE_P99_MS, TARGET_BATCH_RPS = 1000.0, 50.0, 20000.0

# The source tree gunicorn and manage.py run from: a `git archive` snapshot of --ref
# (default HEAD, so the figures belong to a commit) or --src (e.g. the working tree).
SRC = ROOT


# --- PostgreSQL -----------------------------------------------------------------------


def battle_rows(db: str) -> int:
    return int(psql(db, "SELECT count(*) FROM ingest_battle"))


def settled_battle_rows(db: str, timeout: float = 30.0) -> int:
    """Row count once requests still in flight when wrk stopped have finished."""
    last, stable, deadline = -1, 0, time.monotonic() + timeout
    while time.monotonic() < deadline:
        n = battle_rows(db)
        stable = stable + 1 if n == last else 0
        if stable >= 2:
            return n
        last = n
        time.sleep(0.4)
    return last


# --- Django setup ---------------------------------------------------------------------


def wait_for_labels(timeout_s: float) -> None:
    """ingest imports analysis.labels, which may still be in the works: wait for it."""
    deadline = time.monotonic() + timeout_s
    probe = "import analysis.labels as m; m.label_context; import ingest.labelling"
    env = dict(os.environ, PYTHONPATH=str(SRC))
    while True:
        r = subprocess.run(
            [venv_python(), "-c", probe], cwd=SRC, env=env, capture_output=True, text=True
        )
        if r.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"analysis.labels is still not importable:\n{r.stderr[-2000:]}")
        log("analysis.labels not importable yet (label_context missing); retrying in 60 s")
        time.sleep(60)


def set_up_database(db: str, redis_url: str) -> str:
    """Fresh database with the catalogue and an API key; returns the key."""
    recreate_database(db)
    env = django_env(db, redis_url, SRC)
    manage("migrate", "--noinput", env=env, src=SRC)
    manage("seed_catalogue", env=env, src=SRC)
    code = (
        "from core.services import issue_api_key; "
        "_, key = issue_api_key(name='bench_ingest'); print('APIKEY=' + key)"
    )
    out = manage("shell", "-c", code, env=env, src=SRC)
    match = re.search(r"APIKEY=(\S+)", out)
    if not match:
        raise SystemExit(f"could not issue an API key: {out!r}")
    flush_redis(redis_url)
    return match.group(1)


# --- gunicorn -------------------------------------------------------------------------


class Gunicorn:
    def __init__(self, config: GunicornConfig, args: argparse.Namespace, logdir: Path):
        self.config = config
        extra = {
            # Raised so the anonymous runs measure the throttle's cost, never its 429s.
            "THROTTLE_VOTE_IP": "1000000/min",
            "THROTTLE_VOTE_USER": "1000000/min",
            **dict(e.split("=", 1) for e in args.env),
        }
        env = django_env(args.db, args.redis_url, SRC, **extra)
        self.log_path = (
            logdir / f"gunicorn-{config.worker_class}-{config.workers}x{config.threads}.log"
        )
        self.proc, self.url = start_gunicorn(
            config,
            src=SRC,
            env=env,
            log_path=self.log_path,
            extra=["--timeout", "120", "--keep-alive", "5"],
        )

    def pids(self) -> list[int]:
        return [self.proc.pid, *child_pids(self.proc.pid)]

    def stop(self) -> None:
        stop_process(self.proc)


# --- CPU accounting (/proc) -----------------------------------------------------------


class CpuMeter:
    """CPU seconds used by the app server, PostgreSQL, Redis and wrk during one run."""

    def __init__(self, app_pids: list[int]):
        self.app_pids = app_pids
        self.pg_pids = named_pids({"postgres", "postmaster"})
        self.redis_pids = named_pids({"redis-server"})

    def snapshot(self) -> dict:
        # Postgres backends come and go (connections); count every current one.
        self.pg_pids = sorted(set(self.pg_pids) | set(named_pids({"postgres"})))
        busy, total = total_cpu()
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)  # wrk, once it has been reaped
        return {
            "app": dict(proc_cpu(p) for p in self.app_pids),
            "pg": dict(proc_cpu(p) for p in self.pg_pids),
            "redis": sum(proc_cpu(p)[1] for p in self.redis_pids),
            "children": ru.ru_utime + ru.ru_stime,
            "busy": busy,
            "total": total,
        }

    @staticmethod
    def delta(a: dict, b: dict, seconds: float) -> dict:
        def tree(key):
            # Processes that exited meanwhile (short psql backends) are not counted.
            return sum(v - a[key].get(p, 0.0) for p, v in b[key].items() if p[1] >= 0)

        ncpu = os.cpu_count() or 1
        busy_pct = 100.0 * (b["busy"] - a["busy"]) / max(1, b["total"] - a["total"])
        out = {
            "app_cores": tree("app") / seconds,
            "pg_cores": tree("pg") / seconds,
            "redis_cores": (b["redis"] - a["redis"]) / seconds,
            "wrk_cores": (b["children"] - a["children"]) / seconds,
            "machine_busy_pct": busy_pct,
            "ncpu": ncpu,
        }
        # Whatever else ran on the machine meanwhile (other users' jobs, the kernel's own).
        out["other_cores"] = max(
            0.0,
            busy_pct / 100 * ncpu
            - out["app_cores"]
            - out["pg_cores"]
            - out["redis_cores"]
            - out["wrk_cores"],
        )
        return out


# --- wrk ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    name: str
    mode: str  # ingest.lua mode
    keyed: bool
    connections: int
    items: int = 1  # battles per request
    timeout: str = "10s"
    kind: str = "single"  # single | batch


def scenarios(args) -> list[Scenario]:
    c = args.connections
    return [
        Scenario("native, no code, API key", "battle", True, c),
        Scenario("native, 2 KB prefix+suffix, API key", "battle_code", True, c),
        Scenario("native, no code, anonymous (throttled, raised)", "battle", False, c),
        Scenario("extension PUT /add_completion_outcome, anonymous", "extension", False, c),
        Scenario(
            f"batch of {args.batch_size}, API key",
            "batch",
            True,
            args.batch_connections,
            items=args.batch_size,
            timeout="60s",
            kind="batch",
        ),
    ]


def wrk_scenario(
    url: str, sc: Scenario, tag: str, key: str, duration: float, threads: int, batch_size: int
) -> tuple[dict, str]:
    """One wrk run of ingest.lua; the counts its done() prints, and wrk's report."""
    out = run_wrk(
        url,
        connections=sc.connections,
        seconds=duration,
        threads=max(1, min(threads, sc.connections)),
        timeout=sc.timeout,
        script=LUA,
        script_args=[sc.mode, tag, key if sc.keyed else "-", str(batch_size)],
    )
    match = re.search(r"^WRKJSON (\{.*\})$", out, re.M)
    if not match:
        raise RuntimeError(f"wrk printed no WRKJSON line:\n{out}")
    return json.loads(match.group(1)), out


@dataclass
class RunResult:
    scenario: str
    config: str
    repeat: int
    seconds: float
    requests: int
    ok: int
    non2xx: int
    socket_errors: int
    sent: int
    stored: int
    votes_per_s: float
    requests_per_s: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    consistent: bool
    cpu: dict = field(default_factory=dict)


def one_run(server: Gunicorn, sc: Scenario, repeat: int, key: str, args, db: str) -> RunResult:
    tag = f"r{repeat}-{sc.mode}-{server.config.worker_class}{server.config.workers}-{os.urandom(3).hex()}"
    idle_busy = wait_for_quiet(args.quiet_cores, args.quiet_timeout) if args.quiet_timeout else 0.0
    before = battle_rows(db)
    meter = CpuMeter(server.pids())
    s0, t0 = meter.snapshot(), time.monotonic()
    w, raw = wrk_scenario(server.url, sc, tag, key, args.duration, args.wrk_threads, sc.items)
    elapsed = time.monotonic() - t0
    s1 = meter.snapshot()
    stored = settled_battle_rows(db) - before
    seconds = w["duration_us"] / 1e6
    ok = w["requests"] - w["non2xx"]
    socket_errors = w["connect"] + w["read"] + w["write"] + w["timeout"]
    consistent = (
        w["non2xx"] == 0 and w["timeout"] == 0 and ok * sc.items <= stored <= w["sent"] * sc.items
    )
    result = RunResult(
        scenario=sc.name,
        config=server.config.label,
        repeat=repeat,
        seconds=seconds,
        requests=w["requests"],
        ok=ok,
        non2xx=w["non2xx"],
        socket_errors=socket_errors,
        sent=w["sent"],
        stored=stored,
        votes_per_s=ok * sc.items / seconds,
        requests_per_s=ok / seconds,
        p50_ms=w["p50_us"] / 1000,
        p90_ms=w["p90_us"] / 1000,
        p99_ms=w["p99_us"] / 1000,
        max_ms=w["max_us"] / 1000,
        consistent=consistent,
        cpu={**CpuMeter.delta(s0, s1, elapsed), "busy_before_cores": idle_busy},
    )
    flag = "" if consistent else "  <-- CHECK FAILED"
    log(
        f"  {sc.name} #{repeat}: {result.votes_per_s:,.0f} votes/s, p50 {result.p50_ms:.1f} ms, "
        f"p99 {result.p99_ms:.1f} ms, 2xx {ok}, non-2xx {w['non2xx']}, socket errors "
        f"{socket_errors}, stored {stored} (sent {w['sent'] * sc.items}), app "
        f"{result.cpu['app_cores']:.2f} / pg {result.cpu['pg_cores']:.2f} / redis "
        f"{result.cpu['redis_cores']:.2f} / wrk {result.cpu['wrk_cores']:.2f} / other "
        f"{result.cpu['other_cores']:.2f} cores{flag}"
    )
    if not consistent:
        log(raw)
    return result


def warm_up(server: Gunicorn, key: str, args) -> None:
    """Every worker loads the language detector and opens its DB connection before timing."""
    secs = 3 if args.quick else 8
    for mode in ("battle_code", "extension", "batch"):
        sc = Scenario("warm-up", mode, True, 8 if mode != "batch" else 2, items=20, timeout="60s")
        w, raw = wrk_scenario(
            server.url,
            sc,
            f"warm-{mode}-{os.urandom(3).hex()}",
            key,
            secs if mode == "battle_code" else 2,
            1,
            20,
        )
        if w["non2xx"] or w["requests"] == 0:
            raise SystemExit(f"warm-up of {mode} failed (see {server.log_path}):\n{raw}")


def probe(server: Gunicorn, key: str) -> None:
    """One request with a readable answer, so a broken set-up fails with its message."""
    body = json.dumps(
        {
            "pair_id": f"probe-{os.urandom(4).hex()}",
            "user_id": "probe",
            "privacy": "Private",
            "model_a": "gpt-4o-2024-08-06",
            "model_b": "codestral-2405",
            "outcome": "model_a",
        }
    ).encode()
    req = urllib.request.Request(
        server.url + "/api/v1/battles",
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            if r.status != 201:
                raise SystemExit(f"probe answered {r.status}: {r.read()[:500]!r}")
    except urllib.error.HTTPError as e:
        raise SystemExit(f"probe answered {e.code}: {e.read()[:1000]!r}") from None


# --- pgbench --------------------------------------------------------------------------

PGBENCH_COLUMNS = (
    "pair_id, user_hash, model_a_id, model_b_id, outcome, kind, file_type, language, privacy, "
    "latency_a_ms, latency_b_ms, prefix_chars, suffix_chars, client_version, received_at, "
    "source, client_id, ip_hash, content_hash, natural_language, context_tokens, "
    "context_bucket, task_type, labeler_version, excluded, excluded_reason"
)


def pgbench_setup(db: str) -> str:
    """A copy of ingest_battle's shape (columns, defaults, identity, indexes, checks, FKs)."""
    psql(db, "DROP TABLE IF EXISTS bench_battle")
    psql(db, "CREATE TABLE bench_battle (LIKE ingest_battle INCLUDING ALL)")
    fks = psql(
        db,
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conrelid = 'ingest_battle'::regclass AND contype = 'f'",
    ).splitlines()
    for i, fk in enumerate(fks):
        psql(db, f"ALTER TABLE bench_battle ADD CONSTRAINT bench_battle_fk{i} {fk}")
    a, b = (
        int(x)
        for x in psql(db, "SELECT id FROM leaderboard_arenamodel ORDER BY id LIMIT 2").split()
    )
    client = int(psql(db, "SELECT id FROM ingest_apiclient ORDER BY id LIMIT 1"))
    h = "0123456789abcdef" * 4
    return (
        "\\set lat random(300, 1800)\n"
        f"INSERT INTO bench_battle ({PGBENCH_COLUMNS}) VALUES ("
        "'pg-' || :client_id || '-' || gen_random_uuid(), "
        f"'{h}', {a}, {b}, 0, 'completion', 'python', 'python', 'Private', "
        ":lat, :lat + 100, NULL, NULL, '1.4.0', now(), 'api', "
        f"{client}, '0123456789abcdef', '{h}', 'unknown', NULL, 'unknown', 'other', "
        "'pl1.nl1.ctx1.task1', false, '');\n"
    )


def run_pgbench(db: str, script: str, clients: int, duration: float) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script)
        path = f.name
    try:
        cmd = [
            "pgbench", "-h", PG_HOST, "-p", str(PG_PORT), "-U", PG_USER, "-n",
            "-c", str(clients), "-j", "2", "-T", f"{round(duration)}", "-f", path, db,
        ]  # fmt: skip
        out = subprocess.run(
            cmd, check=True, capture_output=True, text=True, timeout=duration + 120
        ).stdout
    finally:
        os.unlink(path)
    tps = float(re.search(r"tps = ([\d.]+) \(without initial connection time\)", out).group(1))
    lat = re.search(r"latency average = ([\d.]+) ms", out)
    failed = re.search(r"number of failed transactions: (\d+)", out)
    return {
        "tps": tps,
        "latency_avg_ms": float(lat.group(1)) if lat else None,
        "failed": int(failed.group(1)) if failed else 0,
    }


# --- Reporting ------------------------------------------------------------------------


def describe_run(db: str, redis_url: str) -> dict:
    """The machine (common.machine_info) and the versions of every server and tool used."""
    info = machine_info(
        {
            "Django": "django",
            "DRF": "djangorestframework",
            "gunicorn": "gunicorn",
            "psycopg": "psycopg",
            "redis-py": "redis",
        }
    )

    def cmd(*c: str) -> str:
        return subprocess.run(c, capture_output=True, text=True, check=False).stdout.strip()

    try:
        import redis

        redis_version = redis.Redis.from_url(redis_url).info("server")["redis_version"]
    except Exception:
        redis_version = "?"
    info.update(
        postgres=psql(db, "SHOW server_version"),
        pg_settings=psql(
            db,
            "SELECT string_agg(name || '=' || setting || coalesce(unit, ''), ', ' ORDER BY name) "
            "FROM pg_settings WHERE name IN ('synchronous_commit', 'fsync', 'shared_buffers', "
            "'max_connections', 'wal_level')",
        ),
        redis=redis_version,
        wrk=cmd("wrk", "-v").splitlines()[0],
        pgbench=cmd("pgbench", "--version"),
        commit="",  # filled in by main()
    )
    return info


def median(values):
    return statistics.median(values) if values else float("nan")


def summarise(results: list[RunResult]) -> list[dict]:
    rows: dict[tuple[str, str], list[RunResult]] = {}
    for r in results:
        rows.setdefault((r.config, r.scenario), []).append(r)
    out = []
    for (config, scenario), rs in rows.items():
        out.append(
            {
                "config": config,
                "scenario": scenario,
                "n": len(rs),
                "votes_per_s": median([r.votes_per_s for r in rs]),
                "votes_per_s_range": (
                    min(r.votes_per_s for r in rs),
                    max(r.votes_per_s for r in rs),
                ),
                "requests_per_s": median([r.requests_per_s for r in rs]),
                "p50_ms": median([r.p50_ms for r in rs]),
                "p99_ms": median([r.p99_ms for r in rs]),
                "non2xx": sum(r.non2xx for r in rs),
                "socket_errors": sum(r.socket_errors for r in rs),
                "ok": sum(r.ok for r in rs),
                "stored": sum(r.stored for r in rs),
                "consistent": all(r.consistent for r in rs),
                "app_cores": median([r.cpu["app_cores"] for r in rs]),
                "pg_cores": median([r.cpu["pg_cores"] for r in rs]),
                "redis_cores": median([r.cpu["redis_cores"] for r in rs]),
                "wrk_cores": median([r.cpu["wrk_cores"] for r in rs]),
                "other_cores": median([r.cpu["other_cores"] for r in rs]),
                "busy_pct": median([r.cpu["machine_busy_pct"] for r in rs]),
            }
        )
    return out


def render(info: dict, args, summary: list[dict], pg: dict | None, sc_list: list[Scenario]) -> str:
    conns = {s.name: s.connections for s in sc_list}
    items = {s.name: s.items for s in sc_list}
    lines = [
        SECTION,
        "",
        f"Measured {info['date']} by `benchmarks/bench_ingest.py` "
        f"({info['commit']}): gunicorn + PostgreSQL + Redis + wrk all on one machine, "
        "loopback.",
        "",
        f"- Machine: {info['cpu']}, nproc {info['nproc']}, {info['memory_gb']} GB RAM, "
        f"Linux {info['kernel']}",
        f"- Python {info['python']}; "
        + ", ".join(f"{name} {version}" for name, version in info["packages"].items()),
        f"- PostgreSQL {info['postgres']} ({info['pg_settings']}); Redis {info['redis']}; "
        f"{info['wrk']}; {info['pgbench']}",
        f"- Each figure: median of {args.repeats} run(s) of {args.duration:g} s, scenarios "
        "interleaved; wrk with "
        f"{args.wrk_threads} thread(s); Private votes with unique pair ids; anonymous runs with "
        "THROTTLE_VOTE_IP / THROTTLE_VOTE_USER = 1000000/min (the throttles still run, they "
        "never refuse)."
        + (f" Extra gunicorn environment: {', '.join(args.env)}." if args.env else ""),
        "- *stored = 2xx*: rows counted in `ingest_battle` after each run versus 2xx answers "
        "(a request in flight when wrk stops is stored but not counted, so stored may exceed "
        "2xx by at most the number of connections).",
        "- app CPU ms/vote: gunicorn's CPU time per stored vote (less sensitive to noise than "
        "the rate). CPU columns: cores used during the run by gunicorn (all workers) / PostgreSQL / "
        "Redis / wrk / anything else on the machine (other users' jobs: noise).",
        "",
        "| gunicorn | scenario | conns | votes/s (median) | range | p50 ms | p99 ms | non-2xx | "
        "stored ≥ 2xx | app CPU ms/vote | CPU app / pg / redis / wrk / other |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---|",
    ]
    for row in summary:
        lo, hi = row["votes_per_s_range"]
        per_req = (
            f" ({row['requests_per_s']:,.1f} req/s)" if items.get(row["scenario"], 1) > 1 else ""
        )
        lines.append(
            f"| {row['config']} | {row['scenario']} | {conns.get(row['scenario'], '')} | "
            f"{row['votes_per_s']:,.0f}{per_req} | {lo:,.0f}-{hi:,.0f} | {row['p50_ms']:.1f} | "
            f"{row['p99_ms']:.1f} | {row['non2xx']} | "
            f"{'yes' if row['consistent'] else 'NO'} ({row['stored']:,} / {row['ok'] * items.get(row['scenario'], 1):,}) | "
            f"{1000 * row['app_cores'] / max(row['votes_per_s'], 1e-9):.2f} | "
            f"{row['app_cores']:.2f} / {row['pg_cores']:.2f} / {row['redis_cores']:.2f} / "
            f"{row['wrk_cores']:.2f} / {row['other_cores']:.2f} |"
        )
    lines.append("")
    if pg:
        lines.append(
            f"PostgreSQL alone (pgbench, one-row INSERT per transaction into a copy of "
            f"`ingest_battle` with its indexes, checks and foreign keys, {args.pg_clients} "
            f"clients, {args.duration:g} s, median of {len(pg['runs'])}): "
            f"**{pg['tps']:,.0f} inserts/s** (runs: "
            + ", ".join(f"{r['tps']:,.0f}" for r in pg["runs"])
            + f"; average latency {pg['latency_avg_ms']:.1f} ms)."
        )
        lines.append("")
    # The single-vote target needs both the rate and the p99: a configuration that meets
    # both is preferred to a faster one whose p99 is over, then the fastest.
    singles = [
        r
        for r in summary
        if items.get(r["scenario"], 1) == 1
        and "API key" in r["scenario"]
        and "2 KB" not in r["scenario"]
    ]
    best_single = max(
        singles,
        key=lambda r: (
            r["votes_per_s"] >= TARGET_SINGLE_RPS and r["p99_ms"] < TARGET_SINGLE_P99_MS,
            r["votes_per_s"],
        ),
        default=None,
    )
    best_batch = max(
        (r for r in summary if items.get(r["scenario"], 1) > 1),
        key=lambda r: r["votes_per_s"],
        default=None,
    )
    lines.append("Against the targets (best configuration):")
    lines.append("")
    if best_single:
        met = (
            best_single["votes_per_s"] >= TARGET_SINGLE_RPS
            and best_single["p99_ms"] < TARGET_SINGLE_P99_MS
        )
        ratio = f", {best_single['votes_per_s'] / pg['tps']:.0%} of pgbench" if pg else ""
        lines.append(
            f"- single votes (≥ {TARGET_SINGLE_RPS:,.0f}/s, p99 < {TARGET_SINGLE_P99_MS:.0f} ms): "
            f"{best_single['votes_per_s']:,.0f}/s, p99 {best_single['p99_ms']:.1f} ms with "
            f"{best_single['config']}{ratio} — **{'met' if met else 'missed'}**"
        )
    if best_batch:
        met = best_batch["votes_per_s"] >= TARGET_BATCH_RPS
        ratio = f", {best_batch['votes_per_s'] / pg['tps']:.1f}x pgbench single-row" if pg else ""
        lines.append(
            f"- batched (≥ {TARGET_BATCH_RPS:,.0f} votes/s): {best_batch['votes_per_s']:,.0f}/s "
            f"with {best_batch['config']}{ratio} — **{'met' if met else 'missed'}**"
        )
    lines.append("")
    lines.append(
        "Little's law for the closed-loop runs: with 32 connections always busy the mean "
        "latency is 32 / throughput, so 1,000 votes/s already means a 32 ms mean; "
        "p99 < 50 ms at 32 connections needs both the rate and a tight latency spread."
    )
    lines.append("")
    return "\n".join(lines)


# --- Main -----------------------------------------------------------------------------


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_service_options(p, db="arena_bench", redis_db=14)
    p.add_argument(
        "--configs",
        # sync:3 added for issue 2: on 2 cores, 3 sync workers keep both busy while one
        # waits on PostgreSQL, and the kernel's accept queue spreads requests evenly.
        default="sync:3,sync:4,gthread:2x4,gthread:2x8",
        help="comma-separated gunicorn configs: sync:N, gthread:WxT",
    )
    p.add_argument("--duration", type=float, default=20.0, help="seconds per wrk run")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--connections", type=int, default=32)
    p.add_argument("--batch-size", type=int, default=500)
    p.add_argument("--batch-connections", type=int, default=4)
    p.add_argument(
        "--wrk-threads",
        type=int,
        default=1,
        help="wrk threads (it shares the 2 cores with the server)",
    )
    p.add_argument("--pg-clients", type=int, default=32)
    p.add_argument(
        "--only",
        default="",
        help="comma-separated scenario modes to run "
        "(battle,battle_code,battle_anon,extension,batch)",
    )
    p.add_argument("--quick", action="store_true", help="1 repeat of 5 s, one config")
    p.add_argument("--no-docs", action="store_true", help="do not write docs/performance.md")
    p.add_argument("--no-pgbench", action="store_true")
    p.add_argument("--keep-db", action="store_true", help="leave the bench database behind")
    p.add_argument(
        "--labels-wait",
        type=float,
        default=1800,
        help="seconds to wait for analysis.labels to become importable",
    )
    p.add_argument(
        "--quiet-cores",
        type=float,
        default=0.3,
        help="before each run, wait until others use at most this many cores",
    )
    p.add_argument(
        "--quiet-timeout",
        type=float,
        default=180,
        help="longest wait for a quiet machine before each run (0 = don't wait)",
    )
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="extra environment for gunicorn (repeatable), e.g. CONN_MAX_AGE=0",
    )
    p.add_argument("--json", default=str(ROOT / "var" / "bench_ingest.json"))
    p.add_argument(
        "--ref",
        default="HEAD",
        help="benchmark a `git archive` snapshot of this commit (default HEAD)",
    )
    p.add_argument(
        "--src", default="", help="benchmark this source tree instead (e.g. . for the working tree)"
    )
    args = p.parse_args()
    if args.quick:
        args.duration, args.repeats = 5.0, 1
        if args.configs == p.get_default("configs"):
            args.configs = "sync:3"
    for tool in ("wrk", "pgbench", "psql"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is not installed (apt-get install -y wrk postgresql-client)")
    configs = [GunicornConfig.parse(c.strip()) for c in args.configs.split(",") if c.strip()]
    sc_list = scenarios(args)
    if args.only:
        wanted = set(args.only.split(","))
        sc_list = [
            s
            for s in sc_list
            if (s.mode + ("" if s.keyed or s.mode == "extension" else "_anon")) in wanted
        ]

    def on_signal(_signum, _frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    global SRC
    snapshot = None
    if args.src:
        SRC = Path(args.src).resolve()
        head = subprocess.run(
            ["git", "-C", str(SRC), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(SRC), "status", "--porcelain"], capture_output=True, text=True
        ).stdout.strip()
        described = f"tree {SRC}" + (f" at {head}" if head else "")
        described += " with uncommitted changes" if head and dirty else ""
    else:
        snapshot, commit = snapshot_tree(args.ref, prefix="bench_ingest_src")
        SRC = snapshot
        described = f"commit {commit}"
    logdir = Path(tempfile.mkdtemp(prefix="bench_ingest_"))
    results: list[RunResult] = []
    pg: dict | None = None
    try:
        log(f"benchmarking {described}")
        wait_for_labels(args.labels_wait)
        log(f"setting up database {args.db}")
        key = set_up_database(args.db, args.redis_url)
        info = describe_run(args.db, args.redis_url)
        info["commit"] = described
        info["loadavg_before"] = os.getloadavg()
        log(f"{machine_line(info)}; {info['date']}")
        log(f"PostgreSQL {info['postgres']}; {info['wrk']}")
        for config in configs:
            log(f"gunicorn: {config.label}")
            server = Gunicorn(config, args, logdir)
            try:
                probe(server, key)
                warm_up(server, key, args)
                for repeat in range(1, args.repeats + 1):
                    for sc in sc_list:
                        results.append(one_run(server, sc, repeat, key, args, args.db))
            finally:
                server.stop()
        if not args.no_pgbench:
            log(f"pgbench: single-row inserts, {args.pg_clients} clients")
            script = pgbench_setup(args.db)
            runs = []
            for i in range(args.repeats):
                if args.quiet_timeout:
                    wait_for_quiet(args.quiet_cores, args.quiet_timeout)
                r = run_pgbench(args.db, script, args.pg_clients, args.duration)
                log(f"  pgbench #{i + 1}: {r['tps']:,.0f} inserts/s, avg {r['latency_avg_ms']} ms")
                runs.append(r)
            pg = {
                "tps": median([r["tps"] for r in runs]),
                "latency_avg_ms": median([r["latency_avg_ms"] for r in runs]),
                "runs": runs,
            }
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    finally:
        stop_all()
        if not args.keep_db:
            drop_database(args.db)
        with contextlib.suppress(Exception):
            flush_redis(args.redis_url)
        if snapshot is not None:
            shutil.rmtree(snapshot, ignore_errors=True)

    summary = summarise(results)
    text = render(info, args, summary, pg, sc_list)
    print()
    print(text)
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "info": info,
                "args": vars(args),
                "summary": summary,
                "pgbench": pg,
                "runs": [r.__dict__ for r in results],
            },
            indent=2,
            default=str,
        )
    )
    log(f"raw figures: {out}; gunicorn logs: {logdir}")
    if not args.no_docs:
        write_section(text)
        log(f"wrote section {SECTION!r} of {DOC}")
    return 0 if all(r.consistent for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
