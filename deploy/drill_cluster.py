"""The several-machines drill: two of every node behind one nginx, one node of each kind killed.

    .venv/bin/python deploy/drill_cluster.py          (.ci/run runs it after the smoke test)

On loopback, with the configuration files in deploy/cluster/ (docs/scaling.md, "Running
on several machines", shows them): a PostgreSQL primary and a streaming replica
(`pg_basebackup -R`), a private Redis, migrations once (the release step), then two
"machines" a and b, each with a web gunicorn, a pairs gunicorn, a Celery worker (its own
node name) and a beat (deploy/cluster/procfile, each machine's env from
deploy/cluster/machine.env with its own metrics directory), and nginx in front
(deploy/cluster/nginx.conf: both nodes of each pool, passive health checks).

Clients post votes through nginx (half keyed native, half anonymous extension; each
retried until acknowledged: benchmarks/drills.py). Meanwhile web-a, worker-a and the beat
holding the lock are killed (-9, whole process group). Then every acknowledged vote is
looked up: 0 lost and 0 stored twice; a board is published after the kills within
120 s; beat's runs of its 2 s entry are counted from both beats' logs -- before the kill
only the holder sends, after it only the other, which starts within the lock's lifetime;
each machine's /metrics is scraped. Fails unless every target is met. Ports 18xxx
(--port-base); everything it starts it stops, and it removes its directory (--keep: not).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "deploy"))

from smoke_stack import Stack, nginx_main_conf, wait_for  # noqa: E402

from benchmarks.drill_stack import Postgres, Redis, Standby  # noqa: E402
from benchmarks.drills import Tally, client, latest_published, verify  # noqa: E402

CLUSTER = ROOT / "deploy" / "cluster"
BOARD_TARGET = 120.0
CLIENTS = 6
COUNTED = "resume-evaluations"  # the beat entry whose runs are counted (every 2 s)
COUNTED_EVERY = 2.0


def fill(template: str, values: dict[str, object]) -> str:
    """`{name}` placeholders of the cluster files (nginx's own braces left alone)."""
    return re.sub(r"\{(\w+)\}", lambda m: str(values.get(m.group(1), m.group(0))), template)


def procfile(values: dict[str, object]) -> dict[str, list[str]]:
    commands = {}
    for line in fill((CLUSTER / "procfile").read_text(), values).splitlines():
        if line.strip() and not line.startswith("#"):
            name, command = line.split(":", 1)
            commands[name.strip()] = command.split()
    return commands


def machine_env(values: dict[str, object], metrics: Path) -> dict[str, str]:
    text = fill((CLUSTER / "machine.env").read_text(), {**values, "metrics_dir": metrics})
    env = dict(line.split("=", 1) for line in text.splitlines() if line and line[0] != "#")
    path = f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
    return {"PATH": path, "HOME": os.environ.get("HOME", "/root"), **env}


def manage(env: dict[str, str], *args: str) -> str:
    began = time.monotonic()
    out = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True,
        capture_output=True, text=True,
    ).stdout  # fmt: skip
    print(f"drill_cluster: manage.py {args[0]}: {time.monotonic() - began:.0f} s", flush=True)
    return out


PREPARE = """
from catalogue.services import seed_demo_catalogue; seed_demo_catalogue()
from leaderboard.models import RatingConfig
c = RatingConfig.current(); c.rounds = 100; c.slice_rounds = 50; c.min_model_votes = 5
c.slice_min_battles = 50; c.save()
from core.services import issue_api_key
print(issue_api_key(name='drill')[1])
"""


STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ")


def logged_at(line: str) -> float:
    """A plain log line's time (the site's LOG_FORMAT=plain: asctime first, local time)."""
    found = STAMP.match(line)
    if found is None:
        return time.time()
    return (
        time.mktime(time.strptime(found.group(1)[:19], "%Y-%m-%d %H:%M:%S"))
        + int(found.group(1)[20:]) / 1000
    )


class BeatRuns(threading.Thread):
    """Each 'Sending due task <COUNTED>' line of either beat's log, with its logged time."""

    def __init__(self, logs: Path) -> None:
        super().__init__(daemon=True)
        self.logs, self.stop = logs, threading.Event()
        self.runs: list[tuple[float, str]] = []
        self.leader_at: dict[str, float] = {}

    def run(self) -> None:
        seen = {"beat-a": 0, "beat-b": 0}
        while not self.stop.wait(0.2):
            for name in seen:
                path = self.logs / f"{name}.log"
                lines = path.read_text(errors="replace").splitlines() if path.exists() else []
                for line in lines[seen[name] :]:
                    if f"Sending due task {COUNTED}" in line:
                        self.runs.append((logged_at(line), name))
                    if "Acquired lock" in line:
                        self.leader_at.setdefault(name, logged_at(line))
                seen[name] = len(lines)


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return r.read().decode()


def metric_total(text: str, name: str) -> float:
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith(name) and not line.startswith("#")
    )


def start_nodes(stack: Stack, values: dict[str, object], work: Path) -> None:
    commands = procfile(values)
    for machine in ("a", "b"):
        metrics = work / f"metrics-{machine}"
        metrics.mkdir()
        env = machine_env(values, metrics)
        for name, argv in commands.items():
            if name.endswith(f"-{machine}"):
                stack.start(name, argv, env=env, cwd=ROOT)
    prefix = work / "nginx"
    prefix.mkdir()
    site = prefix / "arena.conf"
    site.write_text(fill((CLUSTER / "nginx.conf").read_text(), values))
    main_conf = prefix / "nginx.conf"
    main_conf.write_text(nginx_main_conf(prefix, site, stack.logs))
    subprocess.run(["nginx", "-t", "-q", "-p", str(prefix), "-c", str(main_conf)], check=True)
    stack.start("nginx", ["nginx", "-p", str(prefix), "-c", str(main_conf)],
                env={"PATH": "/usr/sbin:/usr/bin:/bin"}, cwd=prefix)  # fmt: skip


def get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def kill(stack: Stack, name: str) -> None:
    proc = stack.procs.pop(name)  # out of check_running: it is meant to be dead
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def drill(stack: Stack, values: dict[str, object], primary: Postgres, args) -> dict:
    proxy = f"http://127.0.0.1:{values['proxy']}"
    shim = SimpleNamespace(url=proxy, pg=primary)
    beats = BeatRuns(stack.logs)
    beats.start()
    for path in ("/healthz", "/healthz/pairs"):
        wait_for(f"{path} through nginx", lambda p=path: get(proxy + p) == 200,
                 timeout=180, stack=stack)  # fmt: skip
    for port in (values["web_a"], values["web_b"], values["pairs_a"], values["pairs_b"]):
        wait_for(f"node :{port}", lambda p=port: get(f"http://127.0.0.1:{p}/healthz?check=live")
                 == 200, timeout=120, stack=stack)  # fmt: skip
    leader = wait_for("a beat holding the lock", lambda: next(iter(beats.leader_at), None),
                      timeout=60, stack=stack)  # fmt: skip
    tally, stop = Tally(), threading.Event()
    threads = [
        threading.Thread(target=client, args=(shim, args.key, tally, stop, i))
        for i in range(CLIENTS)
    ]
    for t in threads:
        t.start()
    time.sleep(args.before)  # votes flowing through both web nodes before the kills
    board_before = latest_published(shim)
    killed_at = time.monotonic()
    # The beat first, and its runs split at the moment it is dead: the other kills can take
    # seconds on a busy machine, and the leader may fire meanwhile.
    kill(stack, leader)
    killed_wall = time.time()
    for name in ("web-a", "worker-a"):
        kill(stack, name)
    board = wait_for("a board published after the kills",
                     lambda: latest_published(shim) > board_before and time.monotonic(),
                     timeout=BOARD_TARGET + 60, stack=stack) - killed_at  # fmt: skip
    remaining = killed_at + args.after - time.monotonic()
    if remaining > 0:
        time.sleep(remaining)  # votes go on while the survivors carry the load
    stop.set()
    for t in threads:
        t.join()
    follower = "beat-b" if leader == "beat-a" else "beat-a"
    wait_for("the other beat's runs", lambda: sum(n == follower for _, n in beats.runs) >= 3,
             timeout=120, stack=stack)  # fmt: skip
    beats.stop.set()
    lost, dups = verify(shim, tally)
    runs = sorted(beats.runs)
    before = [n for t, n in runs if t < killed_wall]
    after = [n for t, n in runs if t >= killed_wall]
    first_after = min(t for t, n in runs if n == follower)
    # One firing beat: its runs' spacing is the entry's interval (two beats would halve it).
    gaps = [b - a for (a, _), (b, _) in itertools.pairwise(runs)]
    machines = {"a": scrape(int(values["pairs_a"])), "b": scrape(int(values["web_b"]))}
    return {
        "requests": tally.requests, "acknowledged": tally.ok, "errors": dict(tally.errors),
        "lost": lost, "duplicates": dups, "board_seconds": round(board, 1),
        "beat_leader": leader, "beat_runs_before_kill": len(before),
        "beat_runs_before_kill_by": sorted(set(before)),
        "beat_runs_after_kill": len(after),
        "beat_runs_after_kill_by": sorted(set(after)),
        "beat_min_gap_seconds": round(min(gaps), 2) if gaps else None,
        "beat_failover_seconds": round(first_after - killed_wall, 1),
        "votes_counted_by_machine": {m: metric_total(t, "arena_votes_total") for m, t in machines.items()},
        "recomputes_counted_by_machine": {
            m: metric_total(t, "arena_recompute_seconds_count") for m, t in machines.items()
        },
    }  # fmt: skip


def targets(r: dict) -> list[str]:
    missed = []
    if r["lost"] or r["duplicates"]:
        missed.append("0 acknowledged votes lost or stored twice")
    if r["board_seconds"] > BOARD_TARGET:
        missed.append(f"a board within {BOARD_TARGET:.0f} s")
    if (
        r["beat_runs_before_kill_by"] != [r["beat_leader"]]
        or len(r["beat_runs_after_kill_by"]) != 1
    ):
        missed.append("one beat firing at a time")
    if r["beat_min_gap_seconds"] is None or r["beat_min_gap_seconds"] < COUNTED_EVERY / 2:
        missed.append("no entry run twice (two runs closer than half its interval)")
    if not all(r["votes_counted_by_machine"].values()):
        missed.append("each machine's /metrics counts its votes")
    return missed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port-base", type=int, default=18400)
    parser.add_argument("--before", type=float, default=8.0, help="seconds of votes before")
    parser.add_argument("--after", type=float, default=25.0, help="seconds of votes after")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--keep", action="store_true", help="keep the directory (logs)")
    args = parser.parse_args()
    started = time.monotonic()
    b = args.port_base
    values: dict[str, object] = {
        "proxy": b + 80, "web_a": b + 1, "web_b": b + 2, "pairs_a": b + 11, "pairs_b": b + 12,
    }  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="arena-cluster-"))
    work.chmod(0o755)  # PostgreSQL (as postgres) and nginx's workers (nobody) read below it
    (work / "logs").mkdir()
    primary = Postgres(work, port=b + 32)
    standby, redis = Standby(primary, port=b + 33), Redis(work, port=b + 79)
    stack = Stack(work / "logs")
    try:
        primary.init()
        standby.start()
        redis.start()
        print(f"drill_cluster: PostgreSQL, its replica and Redis up after "
              f"{time.monotonic() - started:.0f} s", flush=True)  # fmt: skip
        values |= {"database_url": primary.url, "replica_url": standby.url,
                   "redis_url": redis.url, "logs": stack.logs}  # fmt: skip
        env = machine_env(values, work)
        manage(env, "migrate", "--noinput", "-v0")  # the release step, once
        args.key = manage(env, "shell", "-c", PREPARE).strip().splitlines()[-1]
        manage(env, "simulate_battles", "--battles", "3000", "--seed", "1")
        start_nodes(stack, values, work)
        result = drill(stack, values, primary, args)
    finally:
        stack.stop()
        standby.stop()
        redis.kill()
        with contextlib.suppress(subprocess.CalledProcessError):
            primary.stop("immediate")
        if args.keep:
            print(f"drill_cluster: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    result["seconds"] = round(time.monotonic() - started)
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    missed = targets(result)
    print(f"drill_cluster: {'MISSED: ' + '; '.join(missed) if missed else 'every target met'} "
          f"in {result['seconds']} s")  # fmt: skip
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
