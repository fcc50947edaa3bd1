#!/usr/bin/env python
"""What the day-marking trigger (leaderboard migration 0012) costs a vote (issue 18).

Run from the repository root with the project's venv:

    .venv/bin/python benchmarks/bench_mark_trigger.py            # ~1 min
    .venv/bin/python benchmarks/bench_mark_trigger.py --votes 2000 --no-docs

Re-creates the database ``arena_bench_trigger`` (``--db``), migrates it and stores
``--votes`` battles one per transaction, the way the vote routes do (one INSERT, commit),
alternating blocks of 100 with the triggers enabled and (a) the reference, the same table
with them disabled (``ALTER TABLE ... DISABLE TRIGGER USER``), so both see the same machine
load. Reports the median time per vote transaction of each and their ratio. Figures go to
the section "## Day-marking trigger (issue 18)" of docs/performance.md.
"""

from __future__ import annotations

import argparse
import statistics
import time

import psycopg
from common import (
    add_service_options,
    django_env,
    machine_info,
    machine_line,
    manage,
    pg_url,
    recreate_database,
    write_section,
)

SECTION = "## Day-marking trigger (issue 18)"
BLOCK = 100
INSERT = (
    "INSERT INTO ingest_battle (pair_id, user_hash, model_a_id, model_b_id, outcome, kind, "
    "file_type, language, privacy, client_version, received_at, source, ip_hash, content_hash, "
    "natural_language, context_bucket, task_type, labeler_version, excluded, excluded_reason) "
    "VALUES (%s, %s, %s, %s, 1, 'completion', 'python', 'python', 'Private', '', now(), 'api', "
    "'', %s, 'en', '1-4k', 'other', '', false, '')"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--votes", type=int, default=10_000)
    parser.add_argument("--no-docs", action="store_true")
    add_service_options(parser, db="arena_bench_trigger", redis_db=14)
    args = parser.parse_args()
    info = machine_info({"psycopg": "psycopg"})
    recreate_database(args.db)
    env = django_env(args.db, args.redis_url)
    manage("migrate", "-v0", env=env)
    times: dict[bool, list[float]] = {True: [], False: []}
    with psycopg.connect(pg_url(args.db), autocommit=True) as conn:
        conn.execute(
            "INSERT INTO leaderboard_arenamodel (key, display_name, organization, license, "
            "style, visibility, description, created_at, updated_at, knowledge_cutoff) VALUES "
            "('m-a', 'A', '', '', '', 'public', '', now(), now(), ''), "
            "('m-b', 'B', '', '', '', 'public', '', now(), now(), '')"
        )
        a, b = (r[0] for r in conn.execute("SELECT id FROM leaderboard_arenamodel ORDER BY id"))
        n = 0
        while n < args.votes:
            for enabled in (True, False):
                conn.execute(
                    f"ALTER TABLE ingest_battle {'ENABLE' if enabled else 'DISABLE'} TRIGGER USER"
                )
                for _ in range(BLOCK):
                    t = time.perf_counter()
                    with conn.transaction():
                        conn.execute(INSERT, (f"p{n}", f"{n:064x}", a, b, f"{n:064x}"))
                    if n >= 2 * BLOCK:  # the first pair of blocks warms the connection up
                        times[enabled].append(time.perf_counter() - t)
                    n += 1
    on, off = statistics.median(times[True]), statistics.median(times[False])
    text = "\n".join(
        [
            SECTION,
            "",
            f"Measured {info['date']} on {machine_line(info)} by "
            f"`benchmarks/bench_mark_trigger.py`: {n:,} vote transactions (one INSERT and a "
            f"commit each, over loopback), alternating blocks of {BLOCK} with the triggers on "
            "and (a) off.",
            "",
            "| | median per vote transaction |",
            "|---|---|",
            f"| triggers on (this project) | {1e6 * on:.0f} µs |",
            f"| (a) triggers off (reference) | {1e6 * off:.0f} µs |",
            f"| ratio | {on / off:.2f}x (+{1e6 * (on - off):.0f} µs) |",
            "",
        ]
    )
    print(text)
    if not args.no_docs:
        write_section(text)


if __name__ == "__main__":
    main()
