#!/usr/bin/env python
"""Slice fits of one recompute with 1 and with 2 workers (issue 18, leaderboard/fanout.py).

Run from the repository root with the project's venv, after benchmarks/bench_scale.py (it
reuses that run's database, ``--db``):

    .venv/bin/python benchmarks/bench_fanout.py               # ~3 min
    .venv/bin/python benchmarks/bench_fanout.py --repeats 1 --no-docs

Counts the cells once, then fits every slice (``leaderboard.recompute.fit_slices``, the
recompute's fitting step) ``--repeats`` times (a) alone: the recompute's process fits the
overall board and every slice itself, as with one worker; then with a second worker -- a
real ``celery worker`` process on the same Redis -- that takes slices while the recompute
fits the overall board and the rest. Reports the median fitting time of each, their
ratio, and how many slices the second worker fitted. On a 2-core machine the second worker
can at best halve the slices' part. Figures go to the section "## Fan-out (issue 18)" of
docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid

from common import (
    ROOT,
    add_service_options,
    celery_worker,
    django_env,
    log,
    machine_info,
    machine_line,
    write_section,
)

SECTION = "## Fan-out (issue 18)"


def fits(repeats: int) -> tuple[list[float], list[int]]:
    from catalogue.models import ArenaModel
    from leaderboard import fanout
    from leaderboard.aggregation import aggregate
    from leaderboard.models import RatingConfig
    from leaderboard.recompute import fit_slices

    config = RatingConfig.current()
    keys = dict(ArenaModel.objects.values_list("id", "key"))
    cells = aggregate()
    times, helped = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        results = fit_slices(cells, config, keys)
        times.append(time.perf_counter() - t)
        here = {"recompute", fanout._me()}
        helped.append(sum(1 for r in results if r.fitted_by not in here))
    return times, helped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-docs", action="store_true")
    add_service_options(parser, db="arena_bench_scale", redis_db=13)
    args = parser.parse_args()
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    env = django_env(args.db, args.redis_url, CELERY_QUEUE=queue)
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from leaderboard import fanout

    assert fanout.enabled(), "needs REDIS_URL and RECOMPUTE_FAN_OUT"
    info = machine_info({"numpy": "numpy", "celery": "celery"})
    log("fitting alone (one worker)")
    alone, _ = fits(args.repeats)
    with celery_worker(env, queue, log_prefix="bench_fanout_worker_"):
        log("fitting with a second worker")
        shared, helped = fits(args.repeats)
    med = statistics.median
    text = "\n".join(
        [
            SECTION,
            "",
            f"Measured {info['date']} on {machine_line(info)} by `benchmarks/bench_fanout.py` "
            "on bench_scale's last database: fitting every slice of one recompute (the "
            "overall board with clustered intervals and the controlled board, 34 "
            f"category boards), median of {args.repeats}.",
            "",
            "| workers | fitting time | slices fitted by the second worker |",
            "|---|---|---|",
            f"| (a) 1: the recompute's own | {med(alone):.2f} s | — |",
            f"| 2: the recompute's and one more | {med(shared):.2f} s | {med(helped):.0f} |",
            f"| ratio | {med(alone) / med(shared):.2f}x | |",
            "",
        ]
    )
    print(text)
    if not args.no_docs:
        write_section(text)


if __name__ == "__main__":
    main()
