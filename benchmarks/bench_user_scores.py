"""`POST /user_scores` end to end: the Personal Statistics panel's request, cold and cached.

On a fresh PostgreSQL database with simulated battles and a published board, users cast votes
through the extension's own route; then, in this process through Django's test client (the
view, the cache and the fit; no HTTP server in the way), it times per user:

* ``first after a new board``: the shared cache and the per-process memo cleared, so the
  crowd's counts are read from the snapshot and prepared, then the user's fit;
* ``cold``: the crowd already prepared, this user not yet cached (a new vote, or a new user);
* ``cached``: the same request again (one indexed count query and a cache read).

Medians over the users, with the reference of a plain `POST /user_vote_count` in the same run.
Usage: ``python benchmarks/bench_user_scores.py [--battles N] [--users N] [--votes N] [--no-docs]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from common import (  # noqa: E402
    add_service_options,
    drop_database,
    flush_redis,
    log,
    machine_info,
    machine_line,
    pg_url,
    recreate_database,
    write_section,
)

SECTION = "## Personal leaderboards (issue 14)"


def _setup(db: str, redis_url: str) -> None:
    os.environ.update(
        DATABASE_URL=pg_url(db),
        REDIS_URL=redis_url,
        SECRET_KEY="bench-only",
        USER_ID_HMAC_KEY="bench-only",
        DEBUG="0",
        DJANGO_SETTINGS_MODULE="arena_site.settings",
        RECOMPUTE_ON_VOTES="0",
        ARENA_PRELOAD_LABELS="0",
        # One client casts every vote: the per-IP and per-user limits are not what is measured.
        THROTTLE_VOTE_IP="100000000/min",
        THROTTLE_VOTE_USER="100000000/min",
        THROTTLE_READ_IP="100000000/min",
    )
    import django

    django.setup()


def _timed(call) -> float:
    started = time.perf_counter()
    response = call()
    elapsed = (time.perf_counter() - started) * 1000.0
    assert response.status_code == 200, response.content[:300]
    return elapsed


def run(args: argparse.Namespace) -> dict:
    import numpy as np
    from django.core.cache import cache
    from django.core.management import call_command
    from django.test import Client

    from core import hotcache
    from leaderboard.models import RatingConfig
    from leaderboard.recompute import recompute
    from leaderboard.selectors import board

    call_command("migrate", verbosity=0)
    config = RatingConfig.current()
    config.rounds = config.slice_rounds = 100
    config.save()
    log(f"simulating {args.battles:,} battles")
    call_command("simulate_battles", "--battles", str(args.battles), "--seed", "1", verbosity=0)
    recompute(trigger="bench")
    keys = [m["model"] for m in board()["models"]]
    client = Client()
    rng = np.random.default_rng(7)
    users = [f"bench-user-{u}" for u in range(args.users)]
    log(f"{args.users} users cast {args.votes} votes each through /add_completion_outcome")
    for u, user in enumerate(users):
        for i in range(args.votes):
            top, bottom = rng.choice(keys, size=2, replace=False).tolist()
            body = {
                "pairId": f"bench-{u}-{i}",
                "userId": user,
                "completionItems": [
                    {"completionId": f"c-{u}-{i}-{k}", "model": m, "pairIndex": k}
                    for k, m in enumerate((top, bottom))
                ],
                "acceptedIndex": int(rng.random() < 0.5),
                "version": "1.2.7",
                "privacy": "Private",
                "fileType": "python",
            }
            r = client.put(
                "/add_completion_outcome", data=json.dumps(body), content_type="application/json"
            )
            assert r.status_code == 200, r.content[:300]

    def scores(user: str):
        return client.post(
            "/user_scores", data=json.dumps({"userId": user}), content_type="application/json"
        )

    def vote_count(user: str):
        return client.post(
            "/user_vote_count", data=json.dumps({"userId": user}), content_type="application/json"
        )

    first, cold, cached, count = [], [], [], []
    for user in users:
        cache.clear()
        hotcache.clear()
        first.append(_timed(lambda user=user: scores(user)))
    for user in users:  # the crowd stays prepared; each user's own entry is dropped
        cache.clear()
        cold.append(_timed(lambda user=user: scores(user)))
    for user in users:
        cached.append(_timed(lambda user=user: scores(user)))
        count.append(_timed(lambda user=user: vote_count(user)))
    lists = len(scores(users[0]).json())
    return {
        "battles": args.battles,
        "users": args.users,
        "votes": args.votes,
        "models": len(keys),
        "lists": lists,
        "first_ms": statistics.median(first),
        "cold_ms": statistics.median(cold),
        "cached_ms": statistics.median(cached),
        "vote_count_ms": statistics.median(count),
    }


def report(r: dict, info: dict) -> str:
    return "\n".join(
        [
            SECTION,
            "",
            f"`benchmarks/bench_user_scores.py`, {machine_line(info)}. {r['battles']:,} simulated "
            f"battles on the board ({r['models']} models), {r['users']} users with {r['votes']} votes "
            f"each (so {r['lists']} score lists per answer). In-process through Django's test "
            "client; medians over the users.",
            "",
            "| `POST /user_scores` | median |",
            "|---|---|",
            f"| first request after a new board (crowd read and prepared, then the user's fit) | {r['first_ms']:.1f} ms |",
            f"| cold (crowd prepared, user not cached) | {r['cold_ms']:.1f} ms |",
            f"| cached | {r['cached_ms']:.2f} ms |",
            f"| reference in the same run: `POST /user_vote_count` | {r['vote_count_ms']:.2f} ms |",
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=200_000)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--votes", type=int, default=100)
    parser.add_argument("--no-docs", action="store_true")
    add_service_options(parser, db="arena_bench_scores", redis_db=5)
    args = parser.parse_args()
    recreate_database(args.db)
    flush_redis(args.redis_url)
    try:
        _setup(args.db, args.redis_url)
        result = run(args)
    finally:
        from django.db import connections

        connections.close_all()
        drop_database(args.db)
    info = machine_info()
    text = report(result, info)
    print(text)
    if not args.no_docs:
        write_section(text)


if __name__ == "__main__":
    main()
