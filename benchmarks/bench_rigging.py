"""Benchmark: what vote rigging buys on a simulated arena, with the defences off, as today, and new.

The arena and the attacks are ``analysis.simulate_rigging``'s (20,000 honest votes, 1,400
users, 11 models, the target 5th; target-only and omnipresent rigging of Min et al. from 1, 5
or 20 accounts at human and scripted pace, 500 or 1,000 rigged votes, a 90%-accurate style
classifier); the defences are ``analysis.rigging_defences``'. For each attack and defence the
target's gain is its rating on the rigged board minus its rating on the same honest arena's
board under the same defence, averaged over seeds (the rank is the ordinal rank by rating).
Prints markdown tables: the attacks, flagging precision/recall as a curve over the new rules'
z threshold, the honest board with and without the defences (interval coverage of the known
truth, shift in interval standard deviations), and the cost of the weights.

    .venv/bin/python benchmarks/bench_rigging.py [--seeds 5] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import timeit
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.rigging_defences import DEFENCES, Caps, board, defended_board
from analysis.rigging_rules import NewThresholds, new_flags
from analysis.simulate_rigging import Attack, honest_arena, rig
from analysis.weights import dedup_weights, influence_weights


@dataclass
class Row:
    """Per attack: gains and ranks per defence, flags per rule set, over seeds."""

    gain: dict[str, list[float]] = field(default_factory=lambda: {d: [] for d in DEFENCES})
    rank: dict[str, list[int]] = field(default_factory=lambda: {d: [] for d in DEFENCES})
    flagged: dict[str, list[float]] = field(default_factory=lambda: {"today": [], "new": []})


def attacks(quick: bool) -> list[Attack]:
    accounts = (1, 20) if quick else (1, 5, 20)
    votes = (1000,) if quick else (500, 1000)
    return [
        Attack(kind, acc, n, pace)  # type: ignore[arg-type]
        for kind in ("target_only", "omnipresent")
        for pace in ("human", "scripted")
        for acc in accounts
        for n in votes
    ]


def run_attacks(seeds: int, quick: bool) -> tuple[dict[Attack, Row], dict[str, list[float]]]:
    rows: dict[Attack, Row] = {a: Row() for a in attacks(quick)}
    honest_flagged: dict[str, list[float]] = {"today": [], "new": []}
    for seed in range(seeds):
        honest = honest_arena(seed=1000 + seed)
        t = honest.target
        base = {d: defended_board(honest, d)[0] for d in DEFENCES}
        for attack, row in rows.items():
            rigged = rig(honest, attack, seed=2000 + seed)
            for d in DEFENCES:
                b, flags = defended_board(rigged, d)
                row.gain[d].append(float(b.rating[t] - base[d].rating[t]))
                row.rank[d].append(int(base[d].rank[t] - b.rank[t]))
                if d in ("today", "new"):  # the rules' flags (today's: reports only)
                    row.flagged[d].append(float(flags[rigged.attacker].mean()))
                    honest_flagged[d].append(float(flags[~rigged.attacker].mean()))
    return rows, honest_flagged


def print_attacks(rows: dict[Attack, Row]) -> None:
    print("| attack | gain off | today | today, auto-exclude | caps only | new "
          "| places gained off / new (mean, max) | flagged today | flagged new |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for attack, r in rows.items():
        gains = " | ".join(f"{np.mean(r.gain[d]):+.1f}" for d in DEFENCES)
        ranks = (
            f"{np.mean(r.rank['off']):.1f}, {max(r.rank['off'])} / "
            f"{np.mean(r.rank['new']):.1f}, {max(r.rank['new'])}"
        )
        print(
            f"| {attack.label} | {gains} | {ranks} | {np.mean(r.flagged['today']):.0%} "
            f"| {np.mean(r.flagged['new']):.0%} |"
        )


def flag_curve(seeds: int, quick: bool) -> None:
    """Share of attacking accounts (human pace, all attacks) and honest accounts flagged."""
    zs = (3.0, 3.5, 4.0, 4.5, 5.0, 6.0)
    hit = {z: [0, 0] for z in zs}
    false = {z: [0, 0] for z in zs}
    for seed in range(seeds):
        honest = honest_arena(seed=1000 + seed)
        for attack in attacks(quick):
            if attack.pace != "human":
                continue
            rigged = rig(honest, attack, seed=2000 + seed)
            for z in zs:
                f = np.logical_or.reduce(
                    list(new_flags(rigged, n_models=11, t=NewThresholds(z=z)).values())
                )
                hit[z][0] += int(f[rigged.attacker].sum())
                hit[z][1] += int(rigged.attacker.sum())
                false[z][0] += int(f[~rigged.attacker].sum())
                false[z][1] += int((~rigged.attacker).sum())
    print("\n| z threshold | attacking accounts flagged (human pace) | honest accounts flagged |")
    print("|---|---|---|")
    for z in zs:
        print(f"| {z} | {hit[z][0] / hit[z][1]:.1%} | {false[z][0] / false[z][1]:.2%} |")


def honest_boards(seeds: int) -> None:
    """Coverage of the known truth and the defences' shift of the honest board."""
    cover = {"off": [], "new": []}  # type: dict[str, list[float]]
    shift: list[float] = []
    for seed in range(seeds):
        h = honest_arena(seed=3000 + seed)
        off = board(h)
        new, _ = defended_board(h, "new")
        for name, b in (("off", off), ("new", new)):
            cover[name].append(float(np.mean((b.lower <= h.truth) & (h.truth <= b.upper))))
        shift.extend(np.abs(new.rating - off.rating) / ((off.upper - off.lower) / 3.92))
    print(f"\nHonest boards, {seeds} seeds: 95% interval coverage of the truth off "
          f"{np.mean(cover['off']):.1%}, with the defences {np.mean(cover['new']):.1%}; "
          f"shift by the defences: mean {np.mean(shift):.2f}, max {np.max(shift):.2f} "
          "standard errors")  # fmt: skip


def weight_cost() -> None:
    rng = np.random.default_rng(0)
    n = 1_000_000
    user, day = rng.integers(0, 50_000, n), rng.integers(0, 365, n)
    context = rng.integers(0, 800_000, n)

    def once() -> None:
        influence_weights(user, day, cap_day=50, cap_total=200, base=dedup_weights(user, context))

    best = min(timeit.repeat(once, number=1, repeat=3))
    print(f"\nInfluence weights (dedup + caps) of 1,000,000 votes, 50,000 users: {best:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="fewer attacks (CI-sized)")
    args = parser.parse_args()
    caps = Caps()
    print(f"Caps: {caps.day} per day, {caps.total} in total, dedup {caps.dedup}; "
          f"rules: {NewThresholds()}\n")  # fmt: skip
    rows, honest_flagged = run_attacks(args.seeds, args.quick)
    print_attacks(rows)
    print(f"\nHonest accounts flagged (all attacked arenas): today's rules "
          f"{np.mean(honest_flagged['today']):.2%}, the new rules "
          f"{np.mean(honest_flagged['new']):.2%}")  # fmt: skip
    flag_curve(max(1, args.seeds // 2), args.quick)
    honest_boards(args.seeds * (2 if args.quick else 8))
    if not args.quick:
        weight_cost()


if __name__ == "__main__":
    main()
