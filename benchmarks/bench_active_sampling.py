"""Benchmark: information-aware pair sampling against uniform and latency-aware sampling.

One simulated arena (analysis/simulate_active.py), run under each sampler with the same
seeds: ten models from the start and a newcomer after ENTRY votes, median latencies
log-spaced 0.3-3 s assigned across the ranks by a fixed permutation, block-to-block load
(log-sd 0.6) that also moves outcomes. For every sampler: votes until (a) the top three ranks
are resolved and (b) every interval is narrower than WIDTH points (on the unweighted board
and on the inverse-propensity-weighted one), median and p90 wait, the newcomer's votes to the
vote minimum, and the bias of the final ratings against the uniform-sampler truth.

Writes the "## Information-aware pair sampling" section of docs/performance.md (only that
section); docs/ratings.md quotes the same tables.

    .venv/bin/python benchmarks/bench_active_sampling.py [--seeds N] [--quick] [--no-write]
"""

from __future__ import annotations

import argparse
import sys
import time
import timeit
from collections.abc import Sequence

import numpy as np
from common import ROOT, machine_info, machine_line, write_section

sys.path.insert(0, str(ROOT))

from analysis.active_sampling import fit_pair_ratings, pair_information
from analysis.simulate_active import ActiveRun, ActiveWorld, Sampler, run_arena

SECTION = "## Information-aware pair sampling"
TAU, FLOOR = 1.0, 0.2  # the serving defaults (SamplingConfig)
CURVE = (0.25, 0.4, 0.5, 0.75, 1.0)
# The default is the largest lambda whose median wait stays this far below uniform.
WAIT_TARGET = 0.25
RATINGS = (1150, 1110, 1070, 1030, 1000, 960, 930, 900, 870, 840, 1010)
# Latency rank of each model (0 = fastest): fast and slow models at every rank.
LATENCY_RANK = (6, 2, 9, 4, 0, 7, 3, 10, 1, 8, 5)
ENTRY, HORIZON, WIDTH = 10_000, 40_000, 30.0


def world(quick: bool) -> ActiveWorld:
    medians = np.geomspace(0.3, 3.0, len(RATINGS))
    return ActiveWorld(
        ratings=tuple(float(r) for r in RATINGS),
        median_latency=tuple(float(medians[i]) for i in LATENCY_RANK),
        entry=ENTRY // 5 if quick else ENTRY,
        horizon=HORIZON // 4 if quick else HORIZON,
        width=2 * WIDTH if quick else WIDTH,
    )


def samplers() -> list[Sampler]:
    return [
        Sampler("uniform"),
        Sampler("latency-aware (today)", tau=TAU, floor=FLOOR),
        *(
            Sampler(f"information lambda={lam:g}", tau=TAU, floor=FLOOR, information_weight=lam)
            for lam in CURVE
        ),
    ]


def median_votes(values: Sequence[int | None], horizon: int) -> str:
    """Median over seeds; an arena that never got there counts as the horizon (">=")."""
    filled = [horizon if v is None else v for v in values]
    m = float(np.median(filled))
    return f">={horizon:,}" if m >= horizon else f"{m:,.0f}"


def saved(values: Sequence[int | None], base: Sequence[int | None], horizon: int) -> str:
    m = float(np.median([horizon if v is None else v for v in values]))
    b = float(np.median([horizon if v is None else v for v in base]))
    return f"{m / b - 1:+.0%}" if m < horizon and b < horizon else "n/a"


def bias(errors: np.ndarray) -> tuple[float, float]:
    """Largest |mean error| over models (points) and that model's Monte-Carlo SE."""
    mean = errors.mean(axis=0)
    se = errors.std(axis=0, ddof=1) / np.sqrt(len(errors))
    worst = int(np.argmax(np.abs(mean)))
    return float(abs(mean[worst])), float(se[worst])


def rows(results: dict[str, list[ActiveRun]], horizon: int) -> list[str]:
    base = results["uniform"]
    u_wait = float(np.median([r.wait_median for r in base]))
    out = []
    for name, runs in results.items():
        med = float(np.median([r.wait_median for r in runs]))
        p90 = float(np.median([r.wait_p90 for r in runs]))
        bu, su = bias(np.array([r.error for r in runs]))
        bw, sw = bias(np.array([r.error_weighted for r in runs]))
        cols = [
            name,
            *(
                f"{median_votes([getattr(r, f) for r in runs], horizon)} "
                f"({saved([getattr(r, f) for r in runs], [getattr(r, f) for r in base], horizon)})"
                for f in ("votes_top", "votes_width", "votes_top_weighted", "votes_width_weighted")
            ),
            f"{med:.2f} ({med / u_wait - 1:+.0%})",
            f"{p90:.2f}",
            f"{np.median([r.newcomer_to_minimum or horizon for r in runs]):.0f}",
            f"{bu:.1f} ± {su:.1f}",
            f"{bw:.1f} ± {sw:.1f}",
        ]
        out.append("| " + " | ".join(cols) + " |")
    return out


def chosen(results: dict[str, list[ActiveRun]]) -> str:
    u_wait = float(np.median([r.wait_median for r in results["uniform"]]))
    ok = [
        lam
        for lam in CURVE
        if float(np.median([r.wait_median for r in results[f"information lambda={lam:g}"]]))
        <= (1 - WAIT_TARGET) * u_wait
    ]
    return f"{max(ok):g}" if ok else "none"


def timing(k: int) -> float:
    """Seconds for what serving computes per published snapshot: the refit from the board's
    counts and the information term (best of 5 x 5 calls)."""
    rng = np.random.default_rng(k)
    wins = rng.integers(50, 150, (k, k)).astype(float) * (1 - np.eye(k))

    def once() -> None:
        theta, _ = fit_pair_ratings(wins, prior_votes=1.0)
        pair_information(wins + wins.T, theta)

    return min(timeit.repeat(once, repeat=5, number=5)) / 5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=12)
    parser.add_argument("--quick", action="store_true", help="a quarter-size arena, 3 seeds")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    seeds = 3 if args.quick else args.seeds
    w = world(args.quick)
    started = time.perf_counter()
    results = {s.name: [run_arena(w, s, seed) for seed in range(seeds)] for s in samplers()}
    elapsed = time.perf_counter() - started
    mach = machine_info({"numpy": "numpy"})
    lines = [
        SECTION,
        "",
        "Generated by `benchmarks/bench_active_sampling.py` (code: `analysis/active_sampling.py`,"
        " `analysis/simulate_active.py`).",
        f"Machine: {machine_line(mach)}; run {mach['day']}; {seeds} seeds per sampler, "
        f"{len(results) * seeds} arenas in {elapsed:.0f} s.",
        "",
        f"Arena: {len(RATINGS) - 1} models rated {min(RATINGS[:-1])}-{max(RATINGS)} "
        f"(top gaps 40 points), a newcomer rated {RATINGS[-1]} joins after {w.entry:,} votes; "
        "median latencies 0.3-3 s spread over the ranks, block-to-block load log-sd "
        f"{w.latency_sd}, a completion slower than its model's usual loses "
        f"{w.latency_effect} log-odds per log-second; board refitted every {w.block} votes "
        f"(vote minimum {w.min_votes}); tau {TAU:g} s, floor {FLOOR:g} (serving defaults). "
        f"(a) = top {w.top} ranks resolved (95% intervals of ranks 1-{w.top + 1} do not "
        f"overlap their neighbours'), (b) = every interval narrower than {w.width:g} points; "
        "Fisher intervals on the unweighted board, sandwich intervals on the "
        "inverse-propensity-weighted one (no bootstrap inside the loop). Medians over seeds "
        f"(an arena not there by {w.horizon:,} votes counts as {w.horizon:,}); in brackets the "
        "change against uniform. Bias: largest |mean error| over models against the "
        "uniform-sampler truth, ± its Monte-Carlo standard error.",
        "",
        "| sampler | (a) votes, unweighted | (b) votes, unweighted | (a) votes, weighted | "
        "(b) votes, weighted | median wait (s) | p90 wait (s) | newcomer votes to minimum | "
        "bias unweighted | bias weighted |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *rows(results, w.horizon),
        "",
        "Cost in serving, once per published snapshot and list of served models (refit from "
        "the board's counts + information term): "
        + ", ".join(f"{k} models {timing(k) * 1e3:.1f} ms" for k in (10, 50))
        + "; drawing a pair costs what it did (one more term in the cached softmax).",
        "",
        "`lambda = 0` is the latency-aware sampler. Largest lambda keeping the median wait "
        f">= {WAIT_TARGET:.0%} below uniform: {chosen(results)} (the serving default, "
        "`SamplingConfig.information_weight`).",
        "",
    ]
    section = "\n".join(lines)
    print(section)
    if not args.no_write and not args.quick:
        write_section(section)


if __name__ == "__main__":
    main()
