#!/usr/bin/env python
"""CPU of a recompute's board fits at 1M and 10M battles, old code against new (issue 18).

Run from the repository root with the project's venv:

    .venv/bin/python benchmarks/bench_fit_scale.py                       # main vs this tree
    .venv/bin/python benchmarks/bench_fit_scale.py --reference 095a2b6 --sizes 1e6,1e7

What one run does:

1. Simulates each size's battles with the project's own simulation (``ingest.simulation``'s
   draws: the published Copilot Arena strengths, slices, heavy-tailed users) and counts
   them as the maintained totals hold them -- per (dimension, value, A, B, outcome), each
   slice dimension separately -- and per (user group, A, B, outcome) with users in 4,096
   groups, as the worker's in-memory copy of the group totals hands them over. No database.
2. Starts one child process per tree (``--reference``, exported with ``git archive``, and
   this tree), each importing only its own code, and lets them fit the same inputs in turn,
   ``--repeats`` times per size, sizes and trees interleaved: ``leaderboard.recompute.
   fit_slices`` as a recompute after new votes calls it, with the default RatingConfig
   (bootstrap, 1,000 rounds per board, the overall board's intervals clustered by user
   groups, 3 robustness places) and no fan-out: the position-aware overall board, the
   clustered overall board (its counts built by ``overall_by_user`` from the group arrays)
   and every category slice. The controlled board is left out: it reads at most
   ``ARENA_CONTROLLED_MAX_BATTLES`` battles from the database, and a recompute after new
   votes reuses its last fit.
3. Reports CPU time (``time.process_time``, BLAS on one thread) per run: median and range
   per tree and size, the parts spent in the bootstrap redraws and in the clustered overall
   board, and how far the two trees' boards differ: ratings, which must agree, and interval
   bounds, read against the new code's own difference between seeds 0 and 1 (Monte Carlo
   noise).

Every child's database points at a closed port, so a fit that touched the database would
fail the run instead of timing it. Prints a Markdown block; docs/performance.md quotes it
by hand (section "Scale (issue 18)").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT, log, machine_info, machine_line, snapshot_tree, venv_python

GROUPS = 4096
THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
DIMENSION_FIELDS = {  # leaderboard.aggregation.DIMENSIONS -> the simulation's draws
    "kind": "edit",
    "language": "language",
    "task_type": "task",
    "context_bucket": "bucket",
    "natural_language": "natural",
}


def child_env(src: Path) -> dict[str, str]:
    return {
        **os.environ,
        **{name: "1" for name in THREADS},
        "DJANGO_SETTINGS_MODULE": "arena_site.settings",
        "SECRET_KEY": "bench",
        "USER_ID_HMAC_KEY": "bench",
        "DEBUG": "0",
        "LOG_LEVEL": "WARNING",
        # nothing listens on port 1: a query would fail the run, not hide in its time
        "DATABASE_URL": "postgres://bench@127.0.0.1:1/none",
        "REDIS_URL": "",
        "RECOMPUTE_FAN_OUT": "0",
        "PYTHONPATH": str(src),
    }


# --- inputs ---------------------------------------------------------------------------------


def write_inputs(n: int, seed: int, path: Path) -> dict:
    """Simulate `n` battles and save what a recompute's fits receive (see the docstring)."""
    import django
    import numpy as np

    django.setup()
    from ingest.simulation import _draw

    d = _draw(n, seed)
    d["edit"] = np.where(d["edit"], "edit", "completion")
    k = len(d["keys"])
    pair = (d["a"] * k + d["b"]) * 4 + d["outcome"]  # stored outcome codes 0-3
    # the maintained totals: per dimension separately ("all" = the overall board), as
    # (dimension, value, A, B, outcome, count) rows; "source" says they are all simulated
    parts = {"all": np.full(n, ""), **{dim: d[f] for dim, f in DIMENSION_FIELDS.items()}}
    parts["source"] = np.full(n, "simulated")
    rows: dict[str, list] = {"dimension": [], "value": [], "cell": [], "count": []}
    for dim, labels in parts.items():
        values, code = np.unique(labels.astype(str), return_inverse=True)
        cell, count = np.unique(code * (4 * k * k) + pair, return_counts=True)
        rows["dimension"] += [dim] * len(cell)
        rows["value"] += values[cell // (4 * k * k)].tolist()
        rows["cell"].append(cell % (4 * k * k))
        rows["count"].append(count)
    cell, count = np.concatenate(rows["cell"]), np.concatenate(rows["count"])
    group = d["user"] % GROUPS
    gcell, gcount = np.unique(group * (4 * k * k) + pair, return_counts=True)
    np.savez(
        path,
        keys=np.array([str(key) for key in d["keys"]]),
        dimension=np.array(rows["dimension"]),
        value=np.array(rows["value"]),
        a=cell // (4 * k) + 1,  # model ids 1..K
        b=cell // 4 % k + 1,
        outcome=cell % 4,
        count=count,
        users=np.array(len(np.unique(d["user"]))),
        g_group=gcell // (4 * k * k),
        g_a=gcell // (4 * k) % k + 1,
        g_b=gcell // 4 % k + 1,
        g_outcome=gcell % 4,
        g_count=gcount,
    )
    return {"cells": len(count), "group_rows": len(gcount)}


# --- child: one tree ------------------------------------------------------------------------


def child(inputs: dict[str, str]) -> None:
    """Fit on request: reads "<size>" lines, answers one JSON line per run."""
    import contextlib
    import time
    from unittest import mock

    import django
    import numpy as np

    django.setup()
    from analysis import resample
    from leaderboard import aggregation, incremental, recompute
    from leaderboard.models import RatingConfig

    data = {int(size): np.load(path, allow_pickle=False) for size, path in inputs.items()}
    spent: dict[str, float] = {}

    def timed(label: str, fn):
        def wrapper(*args, **kwargs):
            started = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - started

        return wrapper

    def run(size: int, seed: int) -> dict:
        z = data[size]
        keys = {i + 1: str(k) for i, k in enumerate(z["keys"])}
        columns = tuple(np.array(z[f"g_{c}"]) for c in ("group", "a", "b", "outcome", "count"))
        rows = list(
            zip(
                z["dimension"].tolist(),
                z["value"].tolist(),
                z["a"].tolist(),
                z["b"].tolist(),
                z["outcome"].tolist(),
                z["count"].tolist(),
                strict=True,
            )
        )

        # the group cache hands over fresh arrays on every read
        def user_cells(groups: int | None = None) -> tuple:  # noqa: ARG001 (its signature)
            return tuple(c.copy() for c in columns)

        def board(counts, **kwargs):
            label = "clustered" if counts.user is not None else "other boards"
            return timed(label, fit_board)(counts, **kwargs)

        fit_board = recompute.fit_board
        redraw = resample.MultinomialSampler.draw
        with contextlib.ExitStack() as stack:
            for target, name, value in (
                (aggregation, "merge_targets", lambda: {}),
                (incremental, "read_cells", lambda: (rows, int(z["users"]))),
                (incremental, "enabled", lambda: True),
                (incremental, "read_user_cell_arrays", user_cells),
                (recompute, "_controlled", lambda *a, **k: None),
                (recompute, "fit_board", board),
                (recompute.fanout, "enabled", lambda: False),
                (resample.MultinomialSampler, "draw", timed("redraws", redraw)),
            ):
                stack.enter_context(mock.patch.object(target, name, value))
            cells = aggregation._maintained()  # what aggregate() returns, outside the fit time
            spent.clear()
            started = time.process_time()
            results = recompute.fit_slices(
                cells, RatingConfig(seed=seed), keys, shown=list(keys.values()), refit=False
            )
            total = time.process_time() - started
            overall = next(r for r in results if r.key == recompute.OVERALL)
            started = time.process_time()
            recompute._counts_json(overall.counts)
            counts_json = time.process_time() - started
        boards = {
            r.key: {
                "models": list(r.board.models),
                "rating": np.nan_to_num(r.board.rating, nan=-1.0).tolist(),
                "lower": np.nan_to_num(r.board.ci_lower, nan=-1.0, neginf=-1.0).tolist(),
                "upper": np.nan_to_num(r.board.ci_upper, nan=-1.0, posinf=-1.0).tolist(),
            }
            for r in results
        }
        return {
            "total": total,
            "clustered": spent.get("clustered", 0.0),
            "redraws": spent.get("redraws", 0.0),
            "other": spent.get("other boards", 0.0),
            "counts_json": counts_json,
            "boards": boards,
        }

    print("ready", flush=True)
    for line in sys.stdin:
        size, seed = line.split()
        print(json.dumps(run(int(size), int(seed))), flush=True)


# --- parent ---------------------------------------------------------------------------------


class Child:
    def __init__(self, name: str, src: Path, inputs: dict[int, Path]) -> None:
        self.name = name
        arg = json.dumps({str(k): str(v) for k, v in inputs.items()})
        self.proc = subprocess.Popen(
            [venv_python(), str(Path(__file__).resolve()), "--child", arg],
            cwd=src,
            env=child_env(src),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise SystemExit(f"{name}: child did not start")

    def run(self, size: int, seed: int = 0) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{size} {seed}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"{self.name}: child failed")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def differences(a: dict, b: dict, *, boards: set[str] | None = None) -> dict[str, float]:
    """Largest |difference| of the ratings, and of the interval bounds as a share of the
    interval's width (median and largest), over every model of the boards."""
    import numpy as np

    rating, shares = 0.0, []
    for key, x in a["boards"].items():
        if boards is not None and key not in boards:
            continue
        y = b["boards"][key]
        assert x["models"] == y["models"], key
        rating = max(rating, float(np.max(np.abs(np.subtract(x["rating"], y["rating"])))))
        width = np.subtract(x["upper"], x["lower"])
        for side in ("lower", "upper"):
            shares += (np.abs(np.subtract(x[side], y[side])) / width)[width > 0].tolist()
    return {"rating": rating, "median": float(np.median(shares)), "max": float(np.max(shares))}


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s ({min(values):.3f}-{max(values):.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default="main", help="git ref of the old code")
    parser.add_argument("--sizes", default="1e6,1e7", help="battles, comma-separated")
    parser.add_argument("--repeats", type=int, default=7, help="runs per tree and size")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    for name in THREADS:
        os.environ[name] = "1"
    os.environ.update({k: v for k, v in child_env(ROOT).items() if k != "PYTHONPATH"})
    sys.path.insert(0, str(ROOT))
    info = machine_info({"numpy": "numpy", "scipy": "scipy"})
    load_before = os.getloadavg()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    work = Path(tempfile.mkdtemp(prefix="bench_fit_scale_"))
    ref_src, ref_commit = snapshot_tree(args.reference, prefix="bench_fit_scale_ref")
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--", "analysis", "leaderboard"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    new_label = f"this tree ({head}{', with uncommitted changes' if dirty else ''})"
    inputs, shapes = {}, {}
    for n in sizes:
        log(f"simulating {n:,} battles")
        inputs[n] = work / f"inputs_{n}.npz"
        shapes[n] = write_inputs(n, args.seed, inputs[n])
        log(f"  {shapes[n]}")
    trees = {f"old ({ref_commit})": ref_src, new_label: ROOT}
    children = {name: Child(name, src, inputs) for name, src in trees.items()}
    runs: dict[tuple[str, int], list[dict]] = {}
    noise_runs: dict[int, dict] = {}
    try:
        for n in sizes:
            for c in children.values():  # a warm-up run each, not counted
                c.run(n)
        # sizes and trees interleaved, the trees' order alternating: a shared machine's
        # drifts hit every series alike
        for i in range(args.repeats):
            for n in sizes:
                order = list(children.items())
                for name, c in order if i % 2 == 0 else order[::-1]:
                    result = c.run(n)
                    runs.setdefault((name, n), []).append(result)
                    log(f"{n:,} {name}: {result['total']:.3f} s")
        for n in sizes:  # Monte Carlo noise to read the old-new differences against
            noise_runs[n] = children[new_label].run(n, seed=1)
    finally:
        for c in children.values():
            c.close()
        shutil.rmtree(ref_src, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()
    old_name, new_name = list(trees)
    lines = [
        f"Measured {info['date']} on {machine_line(info)}, by `benchmarks/bench_fit_scale.py`: "
        "CPU time (`time.process_time`, one BLAS thread) of `fit_slices` as a recompute after "
        "new votes runs it (default RatingConfig: bootstrap, 1,000 rounds per board; overall "
        f"board clustered by users in {GROUPS:,} groups; no fan-out; the controlled board "
        "reused, so not fitted), on simulated counts, "
        f"{args.repeats} runs per tree and size, sizes and trees interleaved. Load average "
        f"{load_before[0]:.1f} / {load_before[1]:.1f} / {load_before[2]:.1f} at the start, "
        f"{load_after[0]:.1f} / {load_after[1]:.1f} / {load_after[2]:.1f} at the end.",
        "",
        "| battles | cells | user-group rows | boards | tree | fits, median (range) "
        "| of which the bootstrap redraws | of which the clustered overall board "
        "| `_counts_json` |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n in sizes:
        for name in trees:
            rs = runs[(name, n)]
            lines.append(
                f"| {n:,} | {shapes[n]['cells']:,} | {shapes[n]['group_rows']:,} | "
                f"{len(rs[0]['boards'])} | {name} | {summary([r['total'] for r in rs])} | "
                f"{summary([r['redraws'] for r in rs])} | "
                f"{summary([r['clustered'] for r in rs])} | "
                f"{statistics.median(r['counts_json'] for r in rs) * 1e3:.1f} ms |"
            )
    lines += [
        "",
        "| battles | new / old (medians) | ratings, old vs new | bounds, old vs new: median "
        "(largest) share of the width | the same, new with seed 0 vs seed 1 | clustered "
        "overall board, old vs new |",
        "|---|---|---|---|---|---|",
    ]
    for n in sizes:
        old, new = runs[(old_name, n)][0], runs[(new_name, n)][0]
        change, noise = differences(old, new), differences(new, noise_runs[n])
        overall = differences(old, new, boards={"overall"})
        ratio = statistics.median(r["total"] for r in runs[(new_name, n)]) / statistics.median(
            r["total"] for r in runs[(old_name, n)]
        )
        same = "identical" if overall["max"] == 0 else f"{overall['max']:.1%} of the width"
        lines.append(
            f"| {n:,} | {ratio:.2f} | {change['rating']:.2g} points | "
            f"{change['median']:.1%} ({change['max']:.1%}) | "
            f"{noise['median']:.1%} ({noise['max']:.1%}) | {same} |"
        )
    if len(sizes) > 1:  # each repeat ran the sizes back to back: compare them in pairs
        small, large = sizes[0], sizes[-1]
        parts = []
        for name in trees:
            d = [
                b["total"] - a["total"]
                for a, b in zip(runs[(name, small)], runs[(name, large)], strict=True)
            ]
            parts.append(
                f"{name} {statistics.median(d):+.3f} s (range {min(d):+.3f} to {max(d):+.3f})"
            )
        lines += [
            "",
            f"Fits at {large:,} minus fits at {small:,} battles, paired by repeat: "
            + "; ".join(parts)
            + ".",
        ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
