"""Exhaustive search for the fewest removed votes that put a lower model above another, on
small arenas: the reference the search of ``analysis.robustness`` is checked against (its
tests and ``benchmarks/bench_statistics_checks.py``).

Every removal vector (each (pair, outcome) category keeping at least one vote, as the
search does) of up to ``limit`` votes is refitted exactly, in batches, by size."""

from __future__ import annotations

import numpy as np

from analysis.bradley_terry import SCALE, BTFit
from analysis.bt_solve import newton
from analysis.grouping import OUTCOME_A, OUTCOME_B, GroupedCounts, from_count_rows

TIE = 1e-6
LIMIT = 10  # the bound of the search and of the enumeration on the small arenas


def small_arena(rng: np.random.Generator) -> GroupedCounts:
    """3-6 models, at most 60 battles between random pairs, known ratings."""
    k = int(rng.integers(3, 7))
    true = rng.normal(0.0, 80.0, size=k)
    cells: dict[tuple[str, str, int], int] = {}
    for _ in range(int(rng.integers(12, 61))):
        i, j = rng.choice(k, 2, replace=False)
        outcome = (
            OUTCOME_A if rng.random() < 1 / (1 + 10 ** ((true[j] - true[i]) / 400)) else OUTCOME_B
        )
        cells[(f"m{i}", f"m{j}", outcome)] = cells.get((f"m{i}", f"m{j}", outcome), 0) + 1
    return from_count_rows([(a, b, o, c) for (a, b, o), c in cells.items()])


def vectors(room: np.ndarray, total: int) -> np.ndarray:
    """All vectors 0 <= r <= room with sum(r) == total, as rows."""
    out: list[tuple[int, ...]] = []

    def walk(i: int, left: int, prefix: list[int]) -> None:
        if i == len(room):
            if left == 0:
                out.append(tuple(prefix))
            return
        if left > int(room[i:].sum()):
            return
        for v in range(min(int(room[i]), left) + 1):
            prefix.append(v)
            walk(i + 1, left - v, prefix)
            prefix.pop()

    walk(0, total, [])
    return np.array(out, dtype=np.int64).reshape(-1, len(room))


def count_vectors(room: np.ndarray, limit: int) -> int:
    """How many removal vectors have at most ``limit`` votes (the cost of ``exact_minimum``)."""
    ways = np.zeros(limit + 1, dtype=object)
    ways[0] = 1
    for cap in room:
        nxt = np.zeros_like(ways)
        for v in range(min(int(cap), limit) + 1):
            nxt[v:] += ways[: limit + 1 - v]
        ways = nxt
    return int(ways.sum())


def exact_minimum(fit: BTFit, upper: str, below: list[str], limit: int) -> int | None:
    """The fewest votes (at most ``limit``) whose removal puts a model of ``below`` above
    ``upper`` after an exact refit; None if no removal of up to ``limit`` votes does."""
    prob = fit.problem
    local = {int(m): i for i, m in enumerate(prob.fitted)}
    u = local[fit.models.index(upper)]
    rivals = [local[fit.models.index(m)] for m in below]
    room = np.maximum(prob.cat_count - 1, 0)
    for total in range(1, min(limit, int(room.sum())) + 1):
        rows = vectors(room, total)
        for start_row in range(0, len(rows), 4096):
            r = rows[start_row : start_row + 4096].T
            n, s = prob.pair_stats((prob.cat_count[:, None] - r) * prob.cat_scale[:, None])
            start = np.repeat(fit.theta[:, None], r.shape[1], axis=1)
            theta = newton(prob, start, n, s, gtol=1e-10).theta
            lead = ((theta[rivals] - theta[u]) * SCALE).max(axis=0)
            if (lead > TIE).any():
                return total
    return None
