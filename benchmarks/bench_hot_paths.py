#!/usr/bin/env python
"""Server CPU per request on the hot routes, in one process, without a network (issue 18).

Run from the repository root with the project's venv:

    .venv/bin/python benchmarks/bench_hot_paths.py                    # this tree
    .venv/bin/python benchmarks/bench_hot_paths.py --src /work/main --src .   # A/B, alternating
    .venv/bin/python benchmarks/bench_hot_paths.py --profile --routes extension

What one run does:

1. Re-creates the database ``arena_hot_paths`` (``--db``) with the first ``--src`` tree:
   ``migrate``, ``seed_catalogue``, an API key, and four served models whose providers all
   point at the stub provider (``tests.serving.stub_provider``, started as its own process
   on loopback with latency 0, so its CPU is not counted); flushes the Redis database
   (``--redis-url``).
2. For each batch and each tree in turn (trees alternate, so drifts of a shared machine hit
   them alike), a child process imports that tree's WSGI application
   (``arena_site.wsgi.application``, what gunicorn serves) and calls it directly with a
   prepared WSGI environ, ``--requests`` times per route:

   * ``extension``   PUT /add_completion_outcome, the extension's payload, anonymous (both
     vote throttles counted in Redis, raised so they never refuse), unique pair ids
   * ``native_key``  POST /api/v1/battles, no code, with the API key
   * ``create_pair`` POST /create_pair, ~2.4 KB prefix, ~0.6 KB suffix, Private (pair
     throttles raised); the completion-log writes are waited for before the clock stops

   CPU per request = ``time.process_time()`` (every thread of the child: view, engine loop,
   database threads) over the batch / requests. Every answer must be 2xx. The table shows
   the median over batches per tree and route, and the ratio to the first tree.
3. ``--profile``: one more batch per tree under cProfile, top functions by own time.

No gunicorn, HTTP parsing or client: only the Django app's own CPU, which is what a worker
spends per request beyond the socket work.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import (
    ROOT,
    django_env,
    flush_redis,
    free_port,
    log,
    machine_info,
    machine_line,
    manage,
    recreate_database,
    start_process,
    stop_all,
    stop_process,
    venv_python,
    wait_until_up,
)

ROUTES = ("extension", "native_key", "create_pair")
MODELS = {
    "gpt-4o-2024-08-06": ("openai_chat", "hot-gpt"),
    "claude-3-5-sonnet-20240620": ("openai_chat", "hot-claude"),
    "codestral-2405": ("mistral_fim", "hot-codestral"),
    "deepseek-coder-fim": ("openai_completion", "hot-deepseek"),
}
VOTE_MODELS = list(MODELS)
PREFIX = (
    "import math\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass Circle:\n"
    "    r: float\n\n    def area(self) -> float:\n        return math.pi * self.r ** 2\n\n"
) * 8 + "def perimeter(c: Circle) -> float:\n    return "
SUFFIX = "\n\n\nif __name__ == '__main__':\n    print(perimeter(Circle(2.0)))\n" * 8


def server_env(db: str, redis_url: str, src: Path) -> dict[str, str]:
    return django_env(
        db,
        redis_url,
        src,
        THROTTLE_VOTE_IP="1000000/min",
        THROTTLE_VOTE_USER="1000000/min",
        THROTTLE_PAIR_IP="1000000/min",
        THROTTLE_PAIR_USER="1000000/min",
        HOT_STUB_KEY="sk-hot-not-a-real-key",
    )


def set_up(db: str, redis_url: str, src: Path, stub_url: str) -> str:
    recreate_database(db)
    env = server_env(db, redis_url, src)
    manage("migrate", "--noinput", env=env, src=src)
    manage("seed_catalogue", env=env, src=src)
    code = (
        "from catalogue.models import ArenaModel\n"
        "from serving.models import ModelProvider\n"
        "from core.services import issue_api_key\n"
        f"for key, (kind, remote) in {MODELS!r}.items():\n"
        "    m, _ = ArenaModel.objects.get_or_create(key=key, defaults={'display_name': key})\n"
        f"    ModelProvider.objects.create(model=m, kind=kind, base_url={stub_url!r},\n"
        "        remote_model=remote, api_key_env='HOT_STUB_KEY', timeout_seconds=10,\n"
        "        max_concurrency=512)\n"
        "_, key = issue_api_key(name='bench_hot_paths')\n"
        "print('APIKEY=' + key)\n"
    )
    out = manage("shell", "-c", code, env=env, src=src)
    key = next((line[7:] for line in out.splitlines() if line.startswith("APIKEY=")), "")
    if not key:
        raise SystemExit(f"could not issue an API key: {out!r}")
    flush_redis(redis_url)
    return key


# --- child: one tree, in process -----------------------------------------------------------


def extension_body(pair_id: str, n: int) -> dict:
    a, b = VOTE_MODELS[n % 4], VOTE_MODELS[(n + 1 + n // 4 % 3) % 4]
    user = f"vscode-machine-{n % 5000}"

    def item(index: int, model: str) -> dict:
        return {
            "completionId": f"{pair_id}-c{index}",
            "userId": user,
            "timestamp": 1732900000123,
            "prompt": "<CODE>def add(a, b):",
            "completion": "    return a + b" if index == 0 else "    return sum([a, b])",
            "model": model,
            "pairCompletionId": f"{pair_id}-c{1 - index}",
            "pairIndex": index,
            "latency": 0.84 if index == 0 else 1.31,
            "prefix": "def add(a, b):\n",
            "suffix": "\n\nprint(add(1, 2))\n",
            "version": "0.2.2",
            "privacy": "Private",
            "fileType": "python",
            "username": "",
        }

    return {
        "pairId": pair_id,
        "userId": user,
        "completionItems": [item(0, a), item(1, b)],
        "acceptedIndex": n % 2,
        "version": "0.2.2",
        "privacy": "Private",
        "fileType": "python",
    }


def native_body(pair_id: str, n: int) -> dict:
    return {
        "pair_id": pair_id,
        "user_id": f"user-{n % 5000}",
        "model_a": VOTE_MODELS[n % 4],
        "model_b": VOTE_MODELS[(n + 1) % 4],
        "outcome": ("model_a", "model_b", "tie", "both_bad")[n % 4],
        "privacy": "Private",
        "file_type": "python",
    }


def pair_body(pair_id: str, n: int) -> dict:
    return {
        "pairId": pair_id,
        "userId": f"hot-user-{n % 50}",
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


def child(args: argparse.Namespace) -> None:
    import asyncio
    import cProfile
    import io
    import pstats
    import time
    import uuid

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena_site.settings")
    django.setup()
    from analysis.labels.natural_language import warm_up

    warm_up()
    # The tree's own WSGI application, as gunicorn serves it (a lean dispatch in front of
    # Django's handler where the tree has one).
    from arena_site.wsgi import application as handler

    try:  # a tree whose pair path has database threads of its own (before issue 26)
        from serving.dbwork import drain, run_db
    except ImportError:
        run_db = None

        def drain() -> None:
            pass

    tag = uuid.uuid4().hex[:8]
    specs = {
        "extension": ("PUT", "/add_completion_outcome", extension_body, None),
        "native_key": ("POST", "/api/v1/battles", native_body, args.key),
        "create_pair": ("POST", "/create_pair", pair_body, None),
    }
    statuses: list[str] = []

    def start_response(status, _headers, _exc_info=None):
        statuses.append(status)

    def environ(method: str, path: str, body: bytes, key: str | None) -> dict:
        env = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "SCRIPT_NAME": "",
            "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_HOST": "127.0.0.1:8000",
            "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(len(body)),
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
        }
        if key:
            env["HTTP_AUTHORIZATION"] = f"Bearer {key}"
        return env

    def in_threads(call) -> None:
        """Run `call` in the request thread, the engine's loop thread and the database
        thread if the tree has one (profiles are per thread; the child runs one database
        thread when profiling)."""
        from serving.engine import engine

        async def on_loop() -> None:
            call()

        call()
        asyncio.run_coroutine_threadsafe(on_loop(), engine().loop).result()
        if run_db is not None:
            run_db(call)

    def batch(route: str, label: str, n: int, profilers=None) -> float:
        method, path, make, key = specs[route]
        envs = [
            environ(
                method, path, json.dumps(make(f"hot-{tag}-{route}-{label}-{i}", i)).encode(), key
            )
            for i in range(n)
        ]
        statuses.clear()
        if profilers is not None:
            threads = iter(profilers)
            in_threads(lambda: next(threads).enable())
        started = time.process_time()
        for env in envs:
            response = handler(env, start_response)
            for _ in response:
                pass
            response.close()
        drain()
        spent = time.process_time() - started
        if profilers is not None:
            threads = iter(profilers)
            in_threads(lambda: next(threads).disable())
        bad = [s for s in statuses if not s.startswith("2")]
        if bad:
            raise SystemExit(f"{route}: {len(bad)} non-2xx answers, e.g. {bad[0]}")
        return spent / n * 1000.0

    out: dict = {}
    for route in args.routes.split(","):
        n = args.requests if route != "create_pair" else args.pair_requests
        batch(route, "warm", max(50, n // 10))  # caches, connections, the engine's pools
        if args.profile:
            # Each thread's own CPU time (request, engine loop, database thread), summed.
            threads = 2 if run_db is None else 3
            profilers = [cProfile.Profile(time.thread_time) for _ in range(threads)]
            ms = batch(route, "prof", n, profilers)
            stats = pstats.Stats(*profilers)
            if args.pstats_dir:
                tree = Path(os.getcwd()).name
                stats.dump_stats(str(Path(args.pstats_dir) / f"{tree}-{route}.pstats"))
            text = io.StringIO()
            stats.stream = text  # type: ignore[attr-defined]
            stats.sort_stats("tottime").print_stats(args.top)
            out[route] = {"ms": ms, "profile": text.getvalue()}
        else:
            out[route] = {"ms": batch(route, "run", n)}
    import ingest

    out["_tree"] = str(Path(ingest.__file__).resolve().parent.parent)
    print("HOTJSON " + json.dumps(out))


# --- parent: set up, alternate trees, report -------------------------------------------------


def run_child(src: Path, args: argparse.Namespace, key: str, *, profile: bool) -> dict:
    cmd = [
        venv_python(),
        str(Path(__file__).resolve()),
        "--child",
        "--key",
        key,
        "--routes",
        args.routes,
        "--requests",
        str(args.requests),
        "--pair-requests",
        str(args.pair_requests),
        "--top",
        str(args.top),
        "--pstats-dir",
        args.pstats_dir,
    ]
    if profile:
        cmd.append("--profile")
    env = server_env(args.db, args.redis_url, src)
    if profile:
        env["SERVING_DB_THREADS"] = "1"  # one database thread, so one profiler covers it
    out = subprocess.run(cmd, cwd=src, env=env, capture_output=True, text=True, check=False)
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("HOTJSON ")), None)
    if out.returncode != 0 or line is None:
        raise SystemExit(f"child for {src} failed:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}")
    return json.loads(line[8:])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", default="arena_hot_paths")
    p.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    p.add_argument(
        "--src",
        action="append",
        default=[],
        help="source tree to measure (repeatable; the first one is the baseline)",
    )
    p.add_argument("--routes", default=",".join(ROUTES))
    p.add_argument("--requests", type=int, default=2000, help="votes per batch and route")
    p.add_argument("--pair-requests", type=int, default=500, help="pairs per batch")
    p.add_argument("--batches", type=int, default=5)
    p.add_argument("--profile", action="store_true", help="also one cProfile'd batch per tree")
    p.add_argument("--top", type=int, default=30, help="functions shown per profile")
    p.add_argument("--pstats-dir", default="", help="also save each profile here (pstats)")
    p.add_argument("--json", default="", help="write the raw figures here")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--key", default="", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args)
        return 0

    trees = [Path(s).resolve() for s in (args.src or [str(ROOT)])]
    workdir = Path(tempfile.mkdtemp(prefix="bench_hot_"))
    port = free_port()
    stub = start_process(
        [venv_python(), "-m", "tests.serving.stub_provider", "--port", str(port), "--latency", "0"],
        env=dict(os.environ, PYTHONPATH=str(trees[0])),
        cwd=trees[0],
        log_path=workdir / "stub.log",
    )
    try:
        wait_until_up(port, proc=stub, log_path=workdir / "stub.log", timeout=30)
        key = set_up(args.db, args.redis_url, trees[0], f"http://127.0.0.1:{port}/v1")
        results: dict[str, dict[str, list[float]]] = {str(t): {} for t in trees}
        for b in range(args.batches):
            for tree in trees if b % 2 == 0 else trees[::-1]:
                got = run_child(tree, args, key, profile=False)
                if got.pop("_tree") != str(tree):
                    raise SystemExit(f"the child did not import {tree}")
                for route, r in got.items():
                    results[str(tree)].setdefault(route, []).append(r["ms"])
                log(
                    f"batch {b + 1}/{args.batches} {tree}: "
                    + ", ".join(f"{route} {r['ms']:.3f} ms" for route, r in got.items())
                )
        profiles = {}
        if args.profile:
            for tree in trees:
                profiles[str(tree)] = run_child(tree, args, key, profile=True)
                profiles[str(tree)].pop("_tree")
    finally:
        stop_process(stub)
        stop_all()

    info = machine_info()
    print(machine_line(info))
    print(f"{info['date']}; load average after the run: {os.getloadavg()[0]:.2f}")
    base = results[str(trees[0])]
    header = "| route | " + " | ".join(f"{t} ms CPU/req (median; range)" for t in trees)
    print(header + (" | ratio |" if len(trees) > 1 else " |"))
    for route in args.routes.split(","):
        cells = []
        for tree in trees:
            values = results[str(tree)].get(route, [])
            cells.append(f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})")
        row = f"| {route} | " + " | ".join(cells)
        if len(trees) > 1:
            last = statistics.median(results[str(trees[-1])][route])
            row += f" | {last / statistics.median(base[route]):.2f}x"
        print(row + " |")
    for tree, prof in profiles.items():
        for route, r in prof.items():
            print(f"\n=== profile {tree} {route}: {r['ms']:.3f} ms/request under cProfile")
            print(r["profile"])
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "profiles": profiles}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
