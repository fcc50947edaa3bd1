"""Personal leaderboard benchmark: time per user, this implementation against a plain one.

For each configuration (models on the board, the user's number of votes), on a simulated crowd
of 1,000,000 battles and simulated users whose taste lies anywhere between the crowd's and its
reverse, it measures with one thread:

* ``prepare``: ``CrowdBoard`` for the crowd's grouped counts (once per published snapshot);
* ``per user``: ``personal_history`` for one user, the crowd prepared (median over users; wall
  time and this process's CPU time, which is what counts on a shared, loaded machine);
* ``cold``: both, as for the first user after a new snapshot;
* ``plain``: the same method done the obvious way (``tests/analysis/personal_reference.py``:
  scipy BFGS, one fit per candidate lam and fold, then one per history list), on the same
  users, for the smaller configurations only; the ratio and the largest rating difference
  between the two (both fit to tight tolerances, so it is solver error).

Usage: ``python benchmarks/bench_personal.py [--quick] [--json out.json]``.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.personal import DEFAULT_L2, CrowdBoard, UserVotes, personal_history  # noqa: E402
from analysis.simulate import simulate_battles  # noqa: E402
from tests.analysis import personal_reference as plain  # noqa: E402

CROWD_BATTLES = 1_000_000


def machine() -> dict[str, str]:
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        cpu = next(
            (
                ln.split(":", 1)[1].strip()
                for ln in lscpu.splitlines()
                if ln.startswith("Model name")
            ),
            "?",
        )
    except OSError:
        cpu = platform.processor() or "?"
    try:
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    return {
        "cpu": cpu,
        "nproc": str(os.cpu_count()),
        "load average at start": load,
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "threads": "1 (OPENBLAS/OMP/MKL_NUM_THREADS=1)",
    }


def users(
    ratings: np.ndarray, names: list[str], n_votes: int, count: int, seed: int
) -> list[UserVotes]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        taste = ratings - rng.uniform(0.0, 2.0) * (ratings - ratings.mean())
        sim = simulate_battles(dict(zip(names, taste, strict=True)), n_votes, seed=rng)
        out.append(
            UserVotes(sim.a.astype(np.int64), sim.b.astype(np.int64), sim.outcome.astype(np.int64))
        )
    return out


def ms(seconds: float) -> float:
    return round(1000.0 * seconds, 2)


def plain_history(counts, votes: UserVotes, k: int) -> list[dict[str, float]]:
    rows = list(
        zip(
            counts.a.tolist(),
            counts.b.tolist(),
            counts.outcome.tolist(),
            counts.count.tolist(),
            strict=True,
        )
    )
    votes_l = list(zip(votes.a.tolist(), votes.b.tolist(), votes.outcome.tolist(), strict=True))
    lam, _loss = plain.search(k, rows, votes_l, DEFAULT_L2)
    ends = list(range(20, len(votes_l) + 1, 20))
    ends[-1] = len(votes_l)
    out = []
    for end in ends:
        theta = plain.fit(k, rows, votes_l[:end], lam, DEFAULT_L2)
        out.append(
            dict(zip(counts.models, plain.ratings(theta, list(range(k))).tolist(), strict=True))
        )
    return out


def run(k: int, n_votes: int, n_users: int, with_plain: bool) -> dict[str, object]:
    names = [f"model-{i:02d}" for i in range(k)]
    ratings = np.linspace(1200.0, 800.0, k)
    counts = simulate_battles(
        dict(zip(names, ratings, strict=True)), CROWD_BATTLES, seed=k
    ).grouped()
    group = users(ratings, names, n_votes, n_users, seed=100 + k + n_votes)
    prepare, per_user, cold = [], [], []
    for votes in group:
        started = time.perf_counter()
        crowd = CrowdBoard(counts)
        crowd.theta(DEFAULT_L2)
        prepared = time.perf_counter()
        personal_history(crowd, votes)
        done = time.perf_counter()
        prepare.append(prepared - started)
        cold.append(done - started)
    crowd = CrowdBoard(counts)
    crowd.theta(DEFAULT_L2)
    histories, per_user_cpu = [], []
    for votes in group:
        started, cpu = time.perf_counter(), time.process_time()
        histories.append(personal_history(crowd, votes))
        per_user.append(time.perf_counter() - started)
        per_user_cpu.append(time.process_time() - cpu)
    result: dict[str, object] = {
        "models": k,
        "crowd rows": len(counts.count),
        "user votes": n_votes,
        "lists": len(histories[0]),
        "users": n_users,
        "prepare ms": ms(float(np.median(prepare))),
        "per user ms (median)": ms(float(np.median(per_user))),
        "per user ms (max)": ms(float(np.max(per_user))),
        "per user CPU ms (median)": ms(float(np.median(per_user_cpu))),
        "cold ms (median)": ms(float(np.median(cold))),
    }
    if with_plain:
        times, diff = [], 0.0
        for votes, history in zip(group[:3], histories[:3], strict=True):
            started = time.perf_counter()
            reference = plain_history(counts, votes, k)
            times.append(time.perf_counter() - started)
            for board, expected in zip(history, reference, strict=True):
                diff = max(diff, max(abs(s.elo - expected[s.model]) for s in board.scores))
        result["plain ms (median of 3)"] = ms(float(np.median(times)))
        result["speed-up (plain / per user)"] = round(
            float(np.median(times)) / float(np.median(per_user)), 1
        )
        result["max |elo difference|"] = float(f"{diff:.2g}")
    return result


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer users and configurations")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    n_users = 5 if args.quick else 20
    configs = [(10, 20), (10, 100), (10, 500), (20, 100), (30, 20), (30, 100), (30, 1000)]
    if args.quick:
        configs = [(10, 20), (10, 100), (30, 100)]
    rows = [run(k, n, n_users, with_plain=k == 10 and n <= 100) for k, n in configs]
    report = {"machine": machine(), "crowd battles": CROWD_BATTLES, "results": rows}
    print("\n".join(f"- {key}: {value}" for key, value in report["machine"].items()))
    print(f"- crowd: {CROWD_BATTLES:,} simulated battles\n")
    columns = list(dict.fromkeys(c for r in rows for c in r))
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for r in rows:
        print("| " + " | ".join(str(r.get(c, "")) for c in columns) + " |")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
