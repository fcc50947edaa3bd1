#!/usr/bin/env python
"""The recompute at 1M, 3M and 10M battles: full, incremental, after moderation, reconciled (issue 18).

Run from the repository root with the project's venv:

    .venv/bin/python benchmarks/bench_scale.py                       # 1M, 3M, 10M (~40 min)
    .venv/bin/python benchmarks/bench_scale.py --sizes 200000 --no-docs

For the first size, re-creates the database ``arena_bench_scale`` (``--db``) and writes that
many simulated battles (``simulate_battles``: 90 days, heavy-tailed users). Each larger
size adds copies of those battles, each copy 90 days further back and with its own users
and pair ids: an arena that has been running longer, as a real one grows. Then, per size,
in this process against PostgreSQL:

  * full recompute (``recompute(full=True)``: every battle counted, the per-day tables
    rebuilt, every slice fitted), and beside it (a) the reference: the single GROUP BY over
    every battle that the previous design ran on every recompute (its SQL time only);
  * incremental recompute after 10,000 new votes (today), median of ``--repeats``, with
    this process as the only worker, then again with a second worker -- a real
    ``celery worker`` process on the same Redis queue -- taking slice fits (fanout.py);
  * incremental recompute after a moderation action that excludes a day's battles of one
    user (``moderation.services.exclude_user`` restricted to a day);
  * the count tables rebuilt from every battle (``refresh(full=True)``, SQL GROUP BYs) and
    the nightly reconciliation (``incremental.reconcile``), against the capacity the project
    promises (docs/scaling.md);
  * sizes of the battle table and the count tables.

``--reads`` also serves the board with gunicorn at the last size and measures conditional
requests answered 304 (wrk, ``If-None-Match`` with the board's ETag) next to full 200s.
Figures go to the section "## Scale (issue 18)" of docs/performance.md.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

from bench_recompute import setup_django
from common import (
    ROOT,
    GunicornConfig,
    add_service_options,
    celery_worker,
    django_env,
    log,
    machine_info,
    machine_line,
    manage,
    parse_wrk,
    psql,
    recreate_database,
    run_wrk,
    start_gunicorn,
    stop_process,
    write_section,
)

SECTION = "## Scale (issue 18)"
COPY_DAYS = 90  # the simulation's span: each copy lies this many days further back
TABLES = (
    "ingest_battle",
    "leaderboard_daycell",
    "leaderboard_celltotal",
    "leaderboard_dayusercell",
    "leaderboard_usercelltotal",
    "leaderboard_usergroupcelltotal",
    "leaderboard_usertotal",
    "leaderboard_battlemark",
)


def columns() -> str:
    """The battle table's columns other than those the copies rewrite (new ones included)."""
    rewritten = {"id", "pair_id", "user_hash", "received_at", "content_hash"}
    names = psql(
        ARGS.db,
        "SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM "
        "information_schema.columns WHERE table_name = 'ingest_battle'",
    ).split(",")
    return ", ".join(n for n in names if n not in rewritten)


def grow_to(size: int, base: int) -> None:
    """Add copies of the first `base` battles until there are `size`."""
    have = int(psql(ARGS.db, "SELECT COUNT(*) FROM ingest_battle"))
    cols = columns()
    copy = have // base
    while have < size:
        take = min(base, size - have)
        log(f"  copy {copy}: {take:,} battles, {COPY_DAYS * copy} days further back")
        psql(
            ARGS.db,
            f"INSERT INTO ingest_battle (pair_id, user_hash, received_at, content_hash, {cols}) "
            f"SELECT pair_id || '~{copy}', md5(user_hash || '~{copy}') || md5(user_hash), "
            f"received_at - interval '{COPY_DAYS * copy} days', md5(content_hash || '~{copy}') "
            f"|| md5(content_hash), {cols} FROM ingest_battle WHERE id <= {base_max_id()} "
            f"ORDER BY id LIMIT {take}",
        )
        have += take
        copy += 1
    psql(ARGS.db, "VACUUM ANALYZE")


_BASE_MAX: list[int] = []


def base_max_id() -> int:
    if not _BASE_MAX:
        _BASE_MAX.append(int(psql(ARGS.db, "SELECT MAX(id) FROM ingest_battle")))
    return _BASE_MAX[0]


def new_votes(n: int, tag: str) -> None:
    """`n` votes received now: copies of base battles with fresh ids (one INSERT)."""
    cols = columns()
    psql(
        ARGS.db,
        f"INSERT INTO ingest_battle (pair_id, user_hash, received_at, content_hash, {cols}) "
        f"SELECT pair_id || '~new{tag}', user_hash, now() - random() * interval '1 hour', "
        f"md5(content_hash || '~new{tag}') || md5(content_hash), {cols} FROM ingest_battle "
        f"WHERE id <= {base_max_id()} ORDER BY id LIMIT {n}",
    )


def timed_recompute(**kwargs) -> dict:
    from leaderboard.recompute import recompute

    t = time.perf_counter()
    snap = recompute(trigger="bench", **kwargs)
    return {
        "total": time.perf_counter() - t,
        "sql": snap.aggregate_seconds,
        "fit": snap.fit_seconds,
        "battles": snap.battles,
        "users": snap.users,
    }


def reference_scan() -> float:
    from leaderboard.aggregation import _scan_battles

    t = time.perf_counter()
    _scan_battles()
    return time.perf_counter() - t


def timed_rebuild() -> dict:
    """The count tables rebuilt from every battle, then the nightly reconciliation."""
    from leaderboard import incremental

    t = time.perf_counter()
    incremental.refresh(full=True)
    rebuild = time.perf_counter() - t
    t = time.perf_counter()
    rec = incremental.reconcile()
    reconcile = time.perf_counter() - t
    log(f"  rebuild {rebuild:.1f} s; reconcile {reconcile:.1f} s, {rec.mismatched} cells differed")
    return {"rebuild": rebuild, "reconcile": reconcile, "mismatched": rec.mismatched}


def moderate_one_day(admin) -> int:
    """Exclude one busy user's battles of one day (a typical moderation action)."""
    from datetime import UTC, datetime, timedelta

    from django.db.models import Count

    from ingest.models import Battle
    from moderation.services import set_excluded

    start = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    start -= timedelta(days=10)
    battles = Battle.objects.filter(
        received_at__gte=start, received_at__lt=start + timedelta(days=1), excluded=False
    )
    top = battles.values("user_hash").annotate(n=Count("id")).order_by("-n").first()
    assert top is not None, "no battles ten days ago"
    return set_excluded(
        battles=battles.filter(user_hash=top["user_hash"]),
        exclude=True,
        reason="bench",
        actor=admin,
        target="bench",
    )


def sizes() -> dict[str, int]:
    out = {}
    for table in TABLES:
        out[table] = int(psql(ARGS.db, f"SELECT pg_total_relation_size('{table}')"))
        out[table + ":rows"] = int(psql(ARGS.db, f"SELECT COUNT(*) FROM {table}"))
    return out


def measure(size: int, repeats: int, admin) -> dict:
    log(f"{size:,} battles: full recompute")
    full = timed_recompute(full=True)
    ref = statistics.median(reference_scan() for _ in range(2))
    timed_recompute()  # settle: the first incremental run after a rebuild
    inc = []
    for i in range(repeats):
        new_votes(10_000, f"{size}-{i}")
        inc.append(timed_recompute())
        log(f"  after 10k new votes: {inc[-1]['total']:.2f} s (SQL {inc[-1]['sql']:.2f} s)")
    inc2 = []
    with second_worker():
        timed_recompute()  # settle: the worker's first fits import and warm up
        for i in range(repeats):
            new_votes(10_000, f"{size}-w{i}")
            inc2.append(timed_recompute())
            log(f"  with a second worker: {inc2[-1]['total']:.2f} s (SQL {inc2[-1]['sql']:.2f} s)")
    excluded = moderate_one_day(admin)
    mod = timed_recompute()
    log(f"  after excluding {excluded} battles of one day: {mod['total']:.2f} s")
    rebuilds = timed_rebuild()
    med = statistics.median
    return {
        "size": size,
        "battles": full["battles"],
        "users": full["users"],
        "full_total": full["total"],
        "full_sql": full["sql"],
        "full_fit": full["fit"],
        "ref_scan": ref,
        "inc_total": med(r["total"] for r in inc),
        "inc_sql": med(r["sql"] for r in inc),
        "inc_fit": med(r["fit"] for r in inc),
        "inc2_total": med(r["total"] for r in inc2),
        "inc2_sql": med(r["sql"] for r in inc2),
        "inc2_fit": med(r["fit"] for r in inc2),
        "mod_total": mod["total"],
        "mod_sql": mod["sql"],
        "mod_excluded": excluded,
        **rebuilds,
        "sizes": sizes(),
    }


def second_worker() -> contextlib.AbstractContextManager[None]:
    """A `celery worker` on this run's queue while the block runs (slice fits, fanout.py)."""
    env = django_env(ARGS.db, ARGS.redis_url, CELERY_QUEUE=os.environ["CELERY_QUEUE"])
    return celery_worker(env, os.environ["CELERY_QUEUE"], log_prefix="bench_scale_worker_")


def bench_reads(seconds: int) -> list[dict]:
    """Board and read API at the last size: full 200s vs conditional 304s (wrk)."""
    logdir = Path(tempfile.mkdtemp(prefix="bench_scale_"))
    from bench_recompute import collect_static

    env = django_env(
        ARGS.db,
        ARGS.redis_url,
        ALLOWED_HOSTS="127.0.0.1",
        THROTTLE_READ_IP="100000000/min",
        STATIC_ROOT=collect_static(),
    )
    server, base = start_gunicorn(
        GunicornConfig.parse("sync:4"), src=ROOT, env=env, log_path=logdir / "gunicorn.log",
        extra=["--preload"],
    )  # fmt: skip
    out = []
    try:
        for path in ("/api/v1/leaderboard", "/"):
            with urllib.request.urlopen(base + path) as r:
                etag = r.headers["ETag"]
            script = logdir / "etag.lua"
            script.write_text(f"wrk.headers['If-None-Match'] = '{etag}'\n")
            for label, lua in (("200 (full answer)", None), ("304 (If-None-Match)", script)):
                w = parse_wrk(run_wrk(base + path, connections=32, seconds=seconds, script=lua))
                out.append(
                    {
                        "path": path,
                        "variant": label,
                        "rps": w["rps"],
                        "p99": 1000 * w["p99_s"],
                        "non_2xx": w["non_2xx"],
                    }
                )
                log(f"  {path} {label}: {w['rps']:,.0f} req/s, p99 {1000 * w['p99_s']:.1f} ms")
    finally:
        stop_process(server)
    return out


def mb(n: int) -> str:
    return f"{n / 2**20:,.0f} MB"


def report(results: list[dict], reads: list[dict], info: dict) -> str:
    lines = [
        SECTION,
        "",
        f"Measured {info['date']} on {machine_line(info)}, PostgreSQL {info['postgres']}, by `benchmarks/bench_scale.py` "
        "(PostgreSQL on the same machine; other work was running on it, so read ratios and "
        "medians). Battles: the 90-day simulation, then older copies of it (an arena running "
        "longer). Recompute = count cells + fit every slice + publish, in this process (a "
        "worker's); 2 workers = this process and one `celery worker --pool=solo` on the same "
        "cores, which takes slice fits.",
        "",
        "| battles | users | full recompute (SQL + fit) | (a) reference: one GROUP BY over every "
        "battle | after 10k new votes, 1 worker (SQL + fit) | after 10k new votes, 2 workers | "
        "after a moderation action on one day |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['battles']:,} | {r['users']:,} | {r['full_total']:.1f} s ({r['full_sql']:.1f}"
            f" + {r['full_fit']:.1f}) | {r['ref_scan']:.1f} s (SQL only) | {r['inc_total']:.2f} s"
            f" ({r['inc_sql']:.2f} + {r['inc_fit']:.2f}) | {r['inc2_total']:.2f} s"
            f" ({r['inc2_sql']:.2f} + {r['inc2_fit']:.2f}) | {r['mod_total']:.2f} s "
            f"({r['mod_excluded']} battles excluded) |"
        )
    lines += [
        "",
        "Rebuilding every count table from the battles in SQL (`refresh(full=True)`: what "
        "`--full`, a crash and a failed reconciliation run) and the nightly reconciliation "
        "(`incremental.reconcile`), against the capacity promised in docs/scaling.md "
        "(reconciliation at 10M battles ≤ 10 min on 2 cores):",
        "",
        "| battles | rebuild | reconciliation | cells differed |",
        "|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['battles']:,} | {r['rebuild']:.1f} s | {r['reconcile']:.1f} s | "
            f"{r['mismatched']} |"
        )
    lines += [
        "",
        "Table sizes (with indexes):",
        "",
        "| battles | " + " | ".join(f"`{t}`" for t in TABLES) + " |",
        "|---|" + "---|" * len(TABLES),
    ]
    for r in results:
        s = r["sizes"]
        lines.append(
            f"| {r['battles']:,} | "
            + " | ".join(f"{mb(s[t])} ({s[t + ':rows']:,} rows)" for t in TABLES)
            + " |"
        )
    if reads:
        lines += [
            "",
            f"Reads at {results[-1]['battles']:,} battles (gunicorn sync:4, wrk 32 "
            "connections, loopback):",
            "",
            "| path | answer | req/s | p99 |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| `{r['path']}` | {r['variant']} | {r['rps']:,.0f} | {r['p99']:.1f} ms |"
            for r in reads
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--sizes", default="1000000,3000000,10000000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--reads", action="store_true", help="also measure 304s with wrk")
    parser.add_argument("--seconds", type=int, default=10, help="wrk run length")
    parser.add_argument("--no-docs", action="store_true")
    add_service_options(parser, db="arena_bench_scale", redis_db=13)
    ARGS = args = parser.parse_args()
    wanted = [int(s) for s in args.sizes.split(",")]
    os.environ["CELERY_QUEUE"] = f"bench-scale-{uuid.uuid4().hex[:8]}"
    info = machine_info({"numpy": "numpy", "psycopg": "psycopg"})
    info["postgres"] = psql("postgres", "SHOW server_version")
    recreate_database(args.db)
    env = django_env(args.db, args.redis_url)
    manage("migrate", "-v0", env=env)
    log(f"simulating {wanted[0]:,} battles")
    print(manage("simulate_battles", "--battles", str(wanted[0]), "--seed", "1", env=env), end="")
    psql(args.db, "VACUUM ANALYZE")
    setup_django(args)
    from django.contrib.auth import get_user_model

    from leaderboard.models import RatingConfig

    config = RatingConfig.current()
    info["rounds"] = (config.rounds, config.slice_rounds)
    admin = get_user_model().objects.create_superuser("bench", "bench@example.org", "bench")
    results = []
    for size in wanted:
        # Each size starts with the same day of votes: a refresh counts the whole of each day
        # it touches, so the earlier sizes' new votes (all today) would make today's recount
        # grow from size to size, which is not what the history's size costs.
        psql(args.db, "DELETE FROM ingest_battle WHERE pair_id LIKE '%~new%'")
        grow_to(size, wanted[0])
        results.append(measure(size, args.repeats, admin))
    reads = bench_reads(args.seconds) if args.reads else []
    text = report(results, reads, info)
    print(text)
    if not args.no_docs:
        write_section(text)


ARGS: argparse.Namespace

if __name__ == "__main__":
    main()
