#!/usr/bin/env python
"""User-clustered intervals at scale: every user as a unit vs fixed groups of users (issue 18).

Run from the repository root with the project's venv:

    .venv/bin/python benchmarks/bench_user_groups.py
    .venv/bin/python benchmarks/bench_user_groups.py --sizes 1000000:13 --no-docs

For each size (battles:models) it simulates battles with heavy-tailed users as
``simulate_battles`` does (battles / 10 user slots, Pareto(1.2) activity: about 10 battles
per user, a few with thousands), groups them per (user, top, bottom, outcome) and fits the
overall board three ways, 1,000 bootstrap rounds each: independent votes, users as the
resampled units (the clustered default below ``ARENA_MAX_USER_CLUSTERS`` users), and users in
4,096 fixed groups (the default above it). It reports the time of each fit and how the
grouped intervals compare with the per-user ones. Pure numpy: no database. Figures go to
the section "## Clustered intervals with many users (issue 18)" of docs/performance.md.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from common import ROOT, log, machine_info, machine_line, write_section

sys.path.insert(0, str(ROOT))
from analysis.grouping import group_battles
from analysis.leaderboard import compute_leaderboard
from analysis.simulate import simulate_battles

GROUPS = 4096


def arena(n: int, k: int, seed: int):
    rng = np.random.default_rng(seed)
    sim = simulate_battles(rng.normal(1000, 60, k), n, tie_rate=0.1, top_slot_p=0.55, seed=rng)
    slots = max(1, n // 10)
    user = np.minimum((rng.pareto(1.2, size=n) * slots / 20).astype(np.int64), slots - 1)
    return group_battles(
        sim.a, sim.b, sim.outcome, models=[f"m{i:03d}" for i in range(k)], user=user
    )


def measure(n: int, k: int, seed: int) -> dict:
    counts = arena(n, k, seed)
    out: dict = {
        "battles": n,
        "models": k,
        "users": counts.active_users(),
        "rows": len(counts.count),
    }
    boards = {}
    for label, kw in (
        ("iid", {"clustered": False}),
        ("users", {}),
        ("groups", {"max_clusters": GROUPS}),
    ):
        t = time.perf_counter()
        boards[label] = compute_leaderboard(counts, rounds=1000, seed=seed, **kw)
        out[f"{label}_s"] = time.perf_counter() - t
        log(f"  {n:,} battles, {k} models: {label} {out[f'{label}_s']:.1f} s")
    width = {lb: b.ci_upper - b.ci_lower for lb, b in boards.items()}
    ratio = width["groups"] / width["users"]
    out["ratio_median"] = float(np.nanmedian(ratio))
    out["ratio_range"] = (float(np.nanmin(ratio)), float(np.nanmax(ratio)))
    out["iid_ratio_median"] = float(np.nanmedian(width["iid"] / width["users"]))
    out["rating_diff"] = float(np.nanmax(np.abs(boards["groups"].rating - boards["users"].rating)))
    return out


def report(rows: list[dict], info: dict) -> str:
    lines = [
        "## Clustered intervals with many users (issue 18)",
        "",
        f"`benchmarks/bench_user_groups.py`, {info['day']}; {machine_line(info)}. Simulated "
        "battles with heavy-tailed users (Pareto(1.2) activity, about 10 battles per user), the "
        "overall board with 1,000 bootstrap rounds: independent votes; every user a resampled "
        f"unit; users in {GROUPS:,} fixed groups (`ARENA_MAX_USER_CLUSTERS`). Widths: the "
        "95% interval of each model, grouped / per user (median, range over models).",
        "",
        "| battles | models | users | iid fit | per-user clustered | grouped clustered | speed-up | width grouped / per user | width iid / per user | ratings differ by |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lo, hi = r["ratio_range"]
        lines.append(
            f"| {r['battles']:,} | {r['models']} | {r['users']:,} | {r['iid_s']:.1f} s | "
            f"{r['users_s']:.1f} s | {r['groups_s']:.1f} s | {r['users_s'] / r['groups_s']:.1f}x | "
            f"{r['ratio_median']:.3f} ({lo:.2f}-{hi:.2f}) | {r['iid_ratio_median']:.3f} | "
            f"{r['rating_diff']:.1g} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("--sizes", default="1000000:13,10000000:13,1000000:100")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    info = machine_info({"numpy": "numpy", "scipy": "scipy"})
    rows = []
    for size in args.sizes.split(","):
        n, _, k = size.partition(":")
        rows.append(measure(int(float(n)), int(k or 13), args.seed))
    text = report(rows, info)
    print(text)
    if not args.no_docs:
        write_section(text)


if __name__ == "__main__":
    main()
