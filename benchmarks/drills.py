"""Fault drills: votes from many clients while Redis, PostgreSQL, the worker and gunicorn fail.

Starts its own stack on loopback (benchmarks/drill_stack.py: PostgreSQL and Redis on
private ports, gunicorn, a Celery worker and beat under a restarting supervisor), then for
each fault: clients post votes for a while (half keyed native `POST /api/v1/battles`, half
anonymous extension `PUT /add_completion_outcome`, each retried with backoff until
acknowledged), the fault is injected, the clients keep going, and afterwards every
acknowledged vote is looked up in the database. Per fault it reports requests, 2xx, errors
by code, acknowledged-but-not-stored, duplicates, requests that hung past the client
timeout, supervisor restarts, and the time from the end of the fault to the next published
board and to `/healthz` ready. Targets (issue 12): 0 lost, 0 duplicated, 0 hung, a new
board within 120 s of any single fault.

    .venv/bin/python benchmarks/drills.py            # full: ~20-30 s per fault
    .venv/bin/python benchmarks/drills.py --short    # a few seconds per fault (CI)
    .venv/bin/python benchmarks/drills.py --json out.json --only redis_kill,pg_outage
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psycopg
import redis

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.drill_stack import Stack, wait_until

CLIENT_TIMEOUT = 10.0
BOARD_TARGET = 120.0
MODELS = ["gpt-4o-2024-08-06", "codestral-2405", "deepseek-coder-fim", "gemini-1.5-flash-002"]


@dataclass
class Tally:
    requests: int = 0
    ok: int = 0
    hung: int = 0
    errors: Counter = field(default_factory=Counter)
    acked: list[tuple[str, str]] = field(default_factory=list)  # (kind, pair id)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _native(pair_id: str, rng: random.Random) -> dict:
    a, b = rng.sample(MODELS, 2)
    return {
        "pair_id": pair_id,
        "user_id": f"u{rng.randrange(50)}",
        "model_a": a,
        "model_b": b,
        "outcome": rng.choice(["model_a", "model_b", "tie"]),
        "privacy": "Private",
        "file_type": "python",
        "prefix": "def f():\n\u00a0\n",
        "suffix": "\n",
    }


def _extension(pair_id: str, rng: random.Random) -> dict:
    a, b = rng.sample(MODELS, 2)
    item = lambda i, m: {  # noqa: E731
        "completionId": f"{pair_id}-{i}",
        "model": m,
        "pairIndex": i,
        "latency": 0.5 + i,
        "prompt": "",
        "completion": "x",
        "prefix": "x = 1\n",
        "suffix": "",
        "version": "0.2.2",
        "privacy": "Private",
        "fileType": "python",
        "userId": "ext",
    }
    return {
        "pairId": pair_id,
        "userId": f"ext-{rng.randrange(50)}",
        "acceptedIndex": rng.randrange(2),
        "completionItems": [item(0, a), item(1, b)],
        "version": "0.2.2",
        "privacy": "Private",
        "fileType": "python",
    }


def _send(url: str, method: str, body: dict, headers: dict) -> int:
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method=method,
        headers={"Content-Type": "application/json", **headers},
    )
    try:
        with urllib.request.urlopen(req, timeout=CLIENT_TIMEOUT) as r:
            r.read()
            return r.status
    except urllib.error.HTTPError as e:
        e.read()
        return e.code


def client(stack: Stack, key: str, tally: Tally, stop: threading.Event, seed: int) -> None:
    rng = random.Random(seed)
    while not stop.is_set():
        keyed = rng.random() < 0.5
        pair_id = f"d-{uuid.uuid4().hex[:16]}"
        if keyed:
            url, method, body = stack.url + "/api/v1/battles", "POST", _native(pair_id, rng)
            headers = {"Authorization": f"Bearer {key}"}
        else:
            url, method, body = (
                stack.url + "/add_completion_outcome",
                "PUT",
                _extension(pair_id, rng),
            )
            headers = {"X-Forwarded-For": f"10.0.{seed}.1"}
        delay = 0.1
        give_up = time.monotonic() + 90  # a vote is retried for as long as an outage may last
        while time.monotonic() < give_up:
            started = time.monotonic()
            try:
                status = _send(url, method, body, headers)
            except (TimeoutError, OSError) as exc:
                status = -1
                hung = time.monotonic() - started >= CLIENT_TIMEOUT - 0.05
                with tally.lock:
                    tally.requests += 1
                    tally.hung += int(hung)
                    tally.errors["timeout" if hung else type(exc).__name__] += 1
            else:
                with tally.lock:
                    tally.requests += 1
                    if 200 <= status < 300:
                        tally.ok += 1
                        tally.acked.append(("native" if keyed else "extension", pair_id))
                    else:
                        tally.errors[str(status)] += 1
            if 200 <= status < 300:
                break
            time.sleep(delay)
            delay = min(delay * 2, 2.0)


def _db(stack: Stack, sql: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(
        stack.pg.url.replace("postgres://", "postgresql://"), connect_timeout=5
    ) as c:
        return c.execute(sql, params).fetchall()


def latest_published(stack: Stack) -> int:
    rows = _db(
        stack, "SELECT coalesce(max(id), 0) FROM leaderboard_snapshot WHERE status = 'published'"
    )
    return rows[0][0]


def verify(stack: Stack, tally: Tally) -> tuple[int, int]:
    """(acknowledged but not stored, stored more than once) for this phase's votes."""
    ids = [pid for _, pid in tally.acked]
    if not ids:
        return 0, 0
    stored = dict(
        _db(
            stack,
            "SELECT pair_id, count(*) FROM ingest_battle WHERE pair_id = ANY(%s) GROUP BY pair_id",
            (ids,),
        )
    )
    lost = sum(1 for pid in set(ids) if pid not in stored)
    dups = sum(1 for n in stored.values() if n > 1)
    return lost, dups


# --- faults ------------------------------------------------------------------------------


def redis_kill(stack: Stack, hold: float) -> None:
    stack.redis.kill()
    time.sleep(hold)
    stack.redis.start()


def redis_freeze(stack: Stack, hold: float) -> None:
    stack.redis.freeze()
    time.sleep(hold)
    stack.redis.thaw()


def pg_fast_restart(stack: Stack, _hold: float) -> None:
    stack.pg.restart()


def pg_outage(stack: Stack, hold: float) -> None:
    stack.pg.stop("fast")
    time.sleep(hold)
    stack.pg.start()


def _held_recomputes(client: redis.Redis) -> int:
    """Recompute messages taken by a worker and not yet acknowledged (kombu's `unacked`
    hash: the running one, and a queued one the worker holds until its countdown ends)."""
    held = 0
    for raw in client.hvals("unacked"):
        message = json.loads(raw)[0]
        held += message.get("headers", {}).get("task") == "leaderboard.tasks.recompute_leaderboard"
    return held


def worker_kill_mid_recompute(stack: Stack, _hold: float) -> None:
    """Kill the worker while a recompute runs *and* holds the next one, for the votes that
    came after it started (queued with the debounce's countdown; the pending flag set
    again): both messages die with it, and the votes that follow find the flag set and
    schedule nothing. Only the
    redelivery of the lost messages (CELERY_VISIBILITY_TIMEOUT) brings a board before
    beat's next run."""
    running = wait_until(
        lambda: _db(stack, "SELECT 1 FROM leaderboard_snapshot WHERE status = 'running'"), 90, 0.05
    )
    client = redis.Redis.from_url(stack.redis.url)
    parked = running and wait_until(lambda: _held_recomputes(client) >= 2, 30, 0.05)
    stack.procs["worker"].kill9()
    if not running:
        print("  (no recompute was seen running; the worker was killed anyway)", flush=True)
    elif not parked:
        print("  (no follow-up recompute was queued; the worker was killed anyway)", flush=True)


def gunicorn_kill9(stack: Stack, hold: float) -> None:
    end = time.monotonic() + hold
    while time.monotonic() < end:
        pids = stack.gunicorn_workers()
        if pids:
            os.kill(random.choice(pids), 9)
        time.sleep(1.0)


FAULTS = {
    "redis_kill": (redis_kill, "Redis kill -9 and restart"),
    "redis_freeze": (redis_freeze, "Redis frozen (SIGSTOP)"),
    "pg_fast_restart": (pg_fast_restart, "PostgreSQL fast restart"),
    "pg_outage": (pg_outage, "PostgreSQL down"),
    "worker_kill": (worker_kill_mid_recompute, "kill -9 of the worker mid-recompute"),
    "gunicorn_kill": (gunicorn_kill9, "kill -9 of gunicorn workers, every second"),
}


@dataclass
class Result:
    fault: str
    description: str
    hold_seconds: float
    requests: int
    ok: int
    errors: dict
    lost: int
    duplicates: int
    hung: int
    restarts: dict
    board_seconds: float | None
    health_seconds: float | None

    @property
    def met(self) -> bool:
        return (
            self.lost == 0
            and self.duplicates == 0
            and self.hung == 0
            and self.board_seconds is not None
            and self.board_seconds <= BOARD_TARGET
            and self.health_seconds is not None
        )


def run_fault(
    stack: Stack, key: str, name: str, *, clients: int, before: float, after: float, hold: float
) -> Result:
    inject, description = FAULTS[name]
    tally = Tally()
    stop = threading.Event()
    restarts0 = {n: p.restarts for n, p in stack.procs.items()}
    threads = [
        threading.Thread(target=client, args=(stack, key, tally, stop, i)) for i in range(clients)
    ]
    for t in threads:
        t.start()
    time.sleep(before)
    inject(stack, hold)
    ended = time.monotonic()
    seen: list[int] = []  # the board published when the fault ended (the DB may be starting)
    wait_until(lambda: seen.append(latest_published(stack)) or True, 60)
    board_before = seen[-1] if seen else 0
    found: dict[str, float] = {}

    def monitor() -> None:
        # Polls from the end of the fault, while the clients go on, until both recovered.
        deadline = ended + BOARD_TARGET + 60
        while time.monotonic() < deadline and len(found) < 2:
            now = time.monotonic() - ended
            try:
                if "health" not in found and stack.get("/healthz", timeout=3)[0] == 200:
                    found["health"] = now
                if "board" not in found and latest_published(stack) > board_before:
                    found["board"] = now
            except Exception:
                pass
            time.sleep(0.25)

    watcher = threading.Thread(target=monitor)
    watcher.start()
    time.sleep(after)
    stop.set()
    for t in threads:
        t.join()
    watcher.join()
    health, board = found.get("health"), found.get("board")
    lost, dups = verify(stack, tally)
    return Result(
        name,
        description,
        hold,
        tally.requests,
        tally.ok,
        dict(tally.errors),
        lost,
        dups,
        tally.hung,
        {n: p.restarts - restarts0[n] for n, p in stack.procs.items() if p.restarts - restarts0[n]},
        None if board is None else round(board, 1),
        None if health is None else round(health, 1),
    )


def table(results: list[Result]) -> str:
    head = (
        "| fault | hold s | requests | 2xx | errors by code | acked not stored | duplicates "
        "| hung | restarts | new board s | health ok s | targets |"
    )
    lines = [head, "|" + "---|" * 12]
    for r in results:
        errors = ", ".join(f"{k}: {v}" for k, v in sorted(r.errors.items())) or "-"
        restarts = ", ".join(f"{k}: {v}" for k, v in r.restarts.items()) or "-"
        lines.append(
            f"| {r.description} | {r.hold_seconds:g} | {r.requests:,} | {r.ok:,} | {errors} | {r.lost} "
            f"| {r.duplicates} | {r.hung} | {restarts} | {r.board_seconds} | {r.health_seconds} "
            f"| {'met' if r.met else 'MISSED'} |"
        )
    return "\n".join(lines)


def prepare(stack: Stack) -> str:
    script = (
        "from catalogue.services import seed_demo_catalogue; seed_demo_catalogue()\n"
        "from leaderboard.models import RatingConfig\n"
        "c = RatingConfig.current(); c.rounds = 300; c.slice_rounds = 100; c.min_model_votes = 5;"
        " c.slice_min_battles = 50; c.save()\n"
        "from core.services import issue_api_key\n"
        "print(issue_api_key(name='drill')[1])\n"
    )
    key = stack.manage("shell", "-c", script).strip().splitlines()[-1]
    stack.manage("simulate_battles", "--battles", "20000", "--seed", "1")
    return key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="a few seconds per fault (CI)")
    parser.add_argument("--only", default="", help="comma-separated faults: " + ", ".join(FAULTS))
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--clients", type=int)
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(FAULTS)
    clients = args.clients or (8 if args.short else 32)
    before, after = (2.0, 3.0) if args.short else (10.0, 20.0)
    holds = (
        {"redis_kill": 3.0, "redis_freeze": 3.0, "pg_outage": 3.0, "gunicorn_kill": 4.0}
        if args.short
        else {"redis_kill": 5.0, "redis_freeze": 10.0, "pg_outage": 10.0, "gunicorn_kill": 15.0}
    )
    # The site's defaults for everything recovery depends on (debounce, recompute interval
    # and lease, visibility timeout, heartbeats, breaker, Retry-After): the targets are met
    # as shipped, not with a tuned configuration. Only the per-client limits are lifted,
    # since every drill client posts from 127.0.0.1 (and tells its own address in
    # X-Forwarded-For, believed from loopback).
    env = {
        "TRUSTED_PROXIES": "127.0.0.1/32",
        "THROTTLE_VOTE_IP": "100000/min",
        "THROTTLE_VOTE_USER": "100000/min",
        "THROTTLE_READ_IP": "100000/min",
    }
    stack = Stack(extra_env=env)
    started = time.time()
    results: list[Result] = []
    try:
        stack.start()
        key = prepare(stack)
        wait_until(lambda: stack.get("/healthz")[0] == 200, 120)
        for name in names:
            print(f"- {FAULTS[name][1]} ...", flush=True)
            result = run_fault(
                stack,
                key,
                name,
                clients=clients,
                before=before,
                after=after,
                hold=holds.get(name, 0.0),
            )
            print(f"  {asdict(result)}", flush=True)
            results.append(result)
    finally:
        stack.stop()
    import celery
    import kombu

    print(
        f"\n{platform.node()} · {os.cpu_count()} cores · {dt.datetime.now():%Y-%m-%d %H:%M} · "
        f"celery {celery.__version__}, kombu {kombu.__version__} · {clients} clients · "
        f"{'short' if args.short else 'full'} · {time.time() - started:.0f} s\n"
    )
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps([{**asdict(r), "met": r.met} for r in results], indent=1))
    sys.exit(0 if all(r.met for r in results) else 1)


if __name__ == "__main__":
    main()
