#!/usr/bin/env python
"""Conditional reads (304) and cached reads: the app alone, and nginx's read cache in front (issue 18).

Run from the repository root with the project's venv:

    .venv/bin/python benchmarks/bench_read_cache.py
    .venv/bin/python benchmarks/bench_read_cache.py --seconds 5 --no-docs

Re-creates the database ``arena_bench_read_cache`` (``--db``), writes 20,000 simulated
battles and publishes a board. Then serves it with gunicorn (sync, 4 workers, preloaded)
and measures with wrk, for the board page and the read API:

  * the app alone: full 200s, and conditional requests (``If-None-Match`` with the
    board's ETag) that the app answers 304 before the view runs;
  * nginx in front with the shipped read cache (deploy/nginx-read-cache.conf and the
    ``proxy_cache_path`` line of deploy/nginx.conf, assembled by deploy/read_cache.py):
    200s and 304s answered from nginx's cache.

Beside each rate it reports the CPU the app's processes spent per 1,000 requests (from
/proc), which shows whether the app did the work. wrk runs on the same cores as the server,
so every rate here is a lower bound. Figures go to the section "## Conditional and cached
reads (issue 18)" of docs/performance.md.
"""

from __future__ import annotations

import argparse
import http.client
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import (
    ROOT,
    GunicornConfig,
    add_service_options,
    django_env,
    free_port,
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
    tree_cpu_seconds,
    write_section,
)

sys.path.insert(0, str(ROOT / "deploy"))
import read_cache

PATHS = ("/api/v1/leaderboard", "/")


def get(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path, headers=headers or {})
        r = conn.getresponse()
        r.read()
        return r.status, r.headers
    finally:
        conn.close()


def wait_for_hit(port: int, path: str, deadline: float = 60.0) -> None:
    """nginx answers from its cache once a first answer is stored."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        status, headers = get(port, path)
        if status == 200 and headers.get("X-Cache-Status") == "HIT":
            return
    raise RuntimeError(f"nginx never answered {path} from its cache")


def measure(
    port: int, path: str, etag: str | None, app_pid: int, logdir: Path, args
) -> dict[str, Any]:
    script = None
    if etag is not None:
        script = logdir / "etag.lua"
        script.write_text(f"wrk.headers['If-None-Match'] = '{etag}'\n")
    before = tree_cpu_seconds(app_pid)
    w = parse_wrk(
        run_wrk(
            f"http://127.0.0.1:{port}{path}",
            connections=args.connections,
            seconds=args.seconds,
            script=script,
        )
    )
    app_cpu = tree_cpu_seconds(app_pid) - before
    w["app_cpu_ms_per_1000"] = 1000.0 * app_cpu / max(w["requests"], 1) * 1000.0
    return w


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--seconds", type=float, default=10.0, help="wrk run length")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3, help="runs per cell (median)")
    parser.add_argument("--no-docs", action="store_true")
    add_service_options(parser, db="arena_bench_read_cache", redis_db=14)
    args = parser.parse_args()
    info = machine_info({"gunicorn": "gunicorn"})
    info["nginx"] = (
        subprocess.run(["nginx", "-v"], capture_output=True, text=True, check=True)
        .stderr.strip()
        .split("/")[-1]
    )
    recreate_database(args.db)
    env = django_env(args.db, args.redis_url)
    manage("migrate", "-v0", env=env)
    manage("simulate_battles", "--battles", "20000", "--seed", "1", env=env)
    manage("recompute_leaderboard", env=env)
    psql(args.db, "VACUUM ANALYZE")
    from bench_recompute import collect_static

    logdir = Path(tempfile.mkdtemp(prefix="bench_read_cache_"))
    serve_env = django_env(
        args.db,
        args.redis_url,
        ALLOWED_HOSTS="127.0.0.1,localhost",
        THROTTLE_READ_IP="100000000/min",
        STATIC_ROOT=collect_static(),
        # A fresh copy for the whole run: how long nginx may answer by itself.
        ARENA_READ_MAX_AGE="3600",
    )
    server, base = start_gunicorn(
        GunicornConfig.parse("sync:4"), src=ROOT, env=serve_env,
        log_path=logdir / "gunicorn.log", extra=["--preload"],
    )  # fmt: skip
    app_port = int(base.rsplit(":", 1)[1])
    nginx_port = free_port()
    nginx = None
    rows: list[dict[str, Any]] = []
    try:
        nginx = read_cache.start(
            origin_port=app_port, port=nginx_port, prefix=logdir / "nginx", workers=2
        )
        for path in PATHS:
            status, headers = get(app_port, path)
            assert status == 200, (path, status)
            etag = headers["ETag"]
            wait_for_hit(nginx_port, path)
            status, headers = get(nginx_port, path, {"If-None-Match": etag})
            if status != 304 or headers.get("X-Cache-Status") != "HIT":
                raise RuntimeError(f"nginx did not answer the revalidation itself: {status}")
            cells = (
                ("app alone", "200", app_port, None),
                ("app alone", "304", app_port, etag),
                ("nginx read cache", "200", nginx_port, None),
                ("nginx read cache", "304", nginx_port, etag),
            )
            for where, code, port, tag in cells:
                runs = [
                    measure(port, path, tag, server.pid, logdir, args) for _ in range(args.repeats)
                ]
                runs.sort(key=lambda w: w["rps"])
                mid = runs[len(runs) // 2]
                row = {"path": path, "where": where, "code": code, **mid}
                rows.append(row)
                log(
                    f"  {path} {where} {code}: {mid['rps']:,.0f} req/s, p99 "
                    f"{1000 * mid['p99_s']:.1f} ms, app CPU {mid['app_cpu_ms_per_1000']:.0f} ms/1000"
                )
    finally:
        if nginx is not None:
            nginx.terminate()
            nginx.wait(timeout=30)
        stop_process(server)
    text = report(rows, info, args)
    print(text)
    if not args.no_docs:
        write_section(text)


def report(rows: list[dict[str, Any]], info: dict[str, Any], args) -> str:
    when = time.strftime("%Y-%m-%d", time.gmtime())
    lines = [
        "## Conditional and cached reads (issue 18)",
        "",
        f"`benchmarks/bench_read_cache.py`, {when}; {machine_line(info)}, nginx {info['nginx']}. "
        "20,000 simulated "
        f"battles, gunicorn sync:4 (preloaded), wrk 2 threads x {args.connections} "
        f"connections x {args.seconds:g} s on the same two cores, median of {args.repeats} "
        'runs. "nginx read cache" is deploy/nginx-read-cache.conf as shipped, 2 nginx '
        "workers, with a copy already stored. App CPU is what the gunicorn processes spent.",
        "",
        "| route | served by | answer | req/s | p50 | p99 | app CPU per 1,000 requests |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| `{r['path']}` | {r['where']} | {r['code']} | {r['rps']:,.0f} | "
            f"{1000 * r['p50_s']:.1f} ms | {1000 * r['p99_s']:.1f} ms | "
            f"{r['app_cpu_ms_per_1000']:,.0f} ms |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
