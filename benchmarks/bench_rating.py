"""Rating engine benchmark: the straightforward per-round L-BFGS bootstrap versus this engine.

Runs, on the same simulated data (default: 1,000,000 battles, 100 models, 10% ties), side by
side and on one core:

(a) the straightforward method, as in the public Chatbot Arena code (FastChat
    ``rating_systems.py``), re-implemented here: group battles with ``np.unique`` over
    (model_a, model_b, outcome) rows, fit with scipy L-BFGS-B on the grouped counts
    (gtol 1e-6, at most 100 iterations), bootstrap by drawing all rounds with
    ``rng.multinomial`` over the grouped rows and refitting every round with L-BFGS-B.
    The gradient uses ``np.bincount`` (faster than the ``np.add.at`` of the original),
    so the baseline here is if anything quicker than the original;
(b) this engine: ``group_battles``, ``fit_bt`` (Newton, gtol 1e-8) and ``bootstrap``
    (exact fast multinomial redraws + chord iterations, gtol 1e-8).

It reports grouping time, one fit and ``--rounds`` bootstrap rounds (medians of repeats), the
speed-up, and agreement: ratings of the two fits, and intervals both from each method's own
random redraws (differences are then Monte Carlo noise) and with the engine refitting the
baseline's very redraws (``bootstrap(draws=...)``: differences are then solver error only).
Then the engine's cost as the number of models grows (default 100, 200, 300), with the
baseline's cost per round measured on a few rounds and scaled up.

Issue 16 (``rating_comparisons.py``): (c) LMArena's ``arena-rank`` (PyPI, ``bench`` extra) on
the same battles -- fit, sandwich, bootstrap (rounds timed on a few and scaled), and its
contextual fit against the engine's controlled fit; user-clustered sandwich and bootstrap at
1M battles / 100 models / 10k users beside the iid ones and a straightforward cluster
bootstrap; the long statistical runs: coverage iid vs clustered, inverse-propensity weights
against a latency-aware sampler, covariate recovery, and the cost of the robustness numbers.

Usage: ``python benchmarks/bench_rating.py [--quick] [--json out.json]``.
Threads are pinned to one (OPENBLAS/OMP/MKL) before numpy is imported.
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
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy  # noqa: E402
from scipy.optimize import minimize  # noqa: E402
from scipy.special import expit, log_expit  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.bradley_terry import fit_bt  # noqa: E402
from analysis.grouping import OUTCOME_A, OUTCOME_B, group_battles  # noqa: E402
from analysis.intervals import bootstrap  # noqa: E402
from analysis.simulate import simulate_battles  # noqa: E402

LN10 = float(np.log(10.0))


# --------------------------------------------------------------------------- (a) baseline
def baseline_group(model_a: np.ndarray, model_b: np.ndarray, outcome: np.ndarray):
    """Names -> ids, then unique (a, b, outcome) rows with their counts."""
    n = len(model_a)
    names, ids = np.unique(np.concatenate([model_a, model_b]), return_inverse=True)
    schedule = np.column_stack([ids[:n], ids[n:], outcome]).astype(np.int64)
    rows, counts = np.unique(schedule, axis=0, return_counts=True)
    score = np.select([rows[:, 2] == OUTCOME_A, rows[:, 2] == OUTCOME_B], [1.0, 0.0], 0.5)
    return names, rows[:, 0], rows[:, 1], score, counts.astype(float)


def _loss_and_grad(r, a, b, y, w, k):
    """Negative log-likelihood in base-10 rating units (logit = ln10 (r_a - r_b))."""
    z = LN10 * (r[a] - r[b])
    loss = -(w * (y * log_expit(z) + (1.0 - y) * log_expit(-z))).sum()
    g = -LN10 * w * (y - expit(z))
    grad = np.bincount(a, weights=g, minlength=k) - np.bincount(b, weights=g, minlength=k)
    return loss, grad


def baseline_fit(a, b, y, w, k, *, gtol=1e-6, maxiter=100) -> np.ndarray:
    res = minimize(
        _loss_and_grad,
        np.zeros(k),
        args=(a, b, y, w, k),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": gtol, "maxiter": maxiter},
    )
    r = res.x * 400.0
    return r - r.mean() + 1000.0


def baseline_bootstrap(a, b, y, counts, k, rounds, seed):
    """All rounds drawn up front with numpy's multinomial, one L-BFGS fit per round."""
    n = counts.sum()
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(int(n), counts / n, size=rounds)
    ratings = np.array([baseline_fit(a, b, y, d / n, k) for d in draws])
    return ratings, draws


# --------------------------------------------------------------------------- helpers
def timed(fn: Callable, repeats: int) -> tuple[float, list[float], object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), times, out


def machine() -> dict[str, str]:
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        model = next(
            (
                ln.split(":", 1)[1].strip()
                for ln in lscpu.splitlines()
                if ln.startswith("Model name")
            ),
            "?",
        )
    except OSError:
        model = platform.processor() or "?"
    return {
        "cpu": model,
        "nproc": str(os.cpu_count()),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "threads": "1 (OPENBLAS/OMP/MKL_NUM_THREADS=1)",
    }


def percentile_bounds(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = np.percentile(samples, [2.5, 97.5], axis=0)
    return lo, hi


# --------------------------------------------------------------------------- main runs
def head_to_head(args) -> dict:
    k, n = args.models, args.battles
    true = np.random.default_rng(args.seed).normal(1000.0, 100.0, k)
    sim = simulate_battles(true, n, tie_rate=args.ties, seed=args.seed)
    names_a = np.asarray(sim.model_a())  # per-battle model keys, as read from a database
    names_b = np.asarray(sim.model_b())
    outcome = sim.outcome

    res: dict = {"battles": n, "models": k, "ties": args.ties, "rounds": args.rounds}
    t_ga, _, base = timed(lambda: baseline_group(names_a, names_b, outcome), args.repeats)
    t_gb, _, counts = timed(lambda: group_battles(names_a, names_b, outcome), args.repeats)
    t_gi, _, _ = timed(lambda: sim.grouped(), args.repeats)
    _, a, b, y, w = base
    res["grouping"] = {"baseline_s": t_ga, "engine_s": t_gb, "engine_int_ids_s": t_gi}
    res["grouped_rows"] = len(w)

    t_fa, _, r_a = timed(lambda: baseline_fit(a, b, y, w, k), args.repeats)
    t_fb, _, fit = timed(lambda: fit_bt(counts), args.repeats)
    res["fit"] = {
        "baseline_s": t_fa,
        "engine_s": t_fb,
        "engine_iterations": fit.iterations,
        "engine_grad_norm": fit.gradient_norm,
        "max_abs_rating_diff": float(np.max(np.abs(r_a - fit.rating))),
    }

    t_bb, times_b, boot = timed(
        lambda: bootstrap(fit, rounds=args.rounds, seed=args.seed), args.repeats
    )
    t_ba, times_a, (samples_a, draws_a) = timed(
        lambda: baseline_bootstrap(a, b, y, w, k, args.rounds, args.seed), args.baseline_repeats
    )
    lo_a, hi_a = percentile_bounds(samples_a)
    same = bootstrap(fit, draws=draws_a)  # the engine on the baseline's own redraws
    width = np.mean(boot.upper - boot.lower)
    mc_se = 0.085 * width / (2 * 1.96) * np.sqrt(1000 / args.rounds)  # percentile MC error
    res["bootstrap"] = {
        "baseline_s": t_ba,
        "baseline_times_s": times_a,
        "engine_s": t_bb,
        "engine_times_s": times_b,
        "speedup": t_ba / t_bb,
        "engine_chord_iterations": boot.diagnostics["chord_iterations"],
        "engine_max_grad_norm": boot.diagnostics["max_grad_norm"],
        "mean_interval_width": float(width),
        "same_draws_max_abs_bound_diff": float(
            max(np.max(np.abs(same.lower - lo_a)), np.max(np.abs(same.upper - hi_a)))
        ),
        "same_draws_max_abs_round_rating_diff": float(np.max(np.abs(same.samples - samples_a))),
        "own_draws_max_abs_bound_diff": float(
            max(np.max(np.abs(boot.lower - lo_a)), np.max(np.abs(boot.upper - hi_a)))
        ),
        "own_draws_rms_bound_diff": float(
            np.sqrt(np.mean(np.concatenate([boot.lower - lo_a, boot.upper - hi_a]) ** 2))
        ),
        "expected_mc_sd_of_bound_diff": float(np.sqrt(2) * mc_se),
    }
    t_split = _split_engine_time(fit, args)
    res["bootstrap"]["engine_split_s"] = t_split
    return res


def _split_engine_time(fit, args) -> dict[str, float]:
    """Where the engine's bootstrap time goes: the redraws alone vs the rest."""
    from analysis.resample import MultinomialSampler

    sampler = MultinomialSampler(fit.problem.cat_count)

    def draw_all():
        rng = np.random.default_rng(args.seed)
        for start in range(0, args.rounds, 64):
            sampler.draw(min(64, args.rounds - start), rng)

    t_draw, _, _ = timed(draw_all, args.repeats)
    return {"redraws_s": t_draw}


def scaling(args) -> list[dict]:
    out = []
    for k in args.scaling:
        true = np.random.default_rng(args.seed).normal(1000.0, 100.0, k)
        sim = simulate_battles(true, args.battles, tie_rate=args.ties, seed=args.seed)
        counts = sim.grouped()
        t_fit, _, fit = timed(lambda counts=counts: fit_bt(counts), args.repeats)
        reps = max(1, min(args.repeats, 3))
        t_boot, _, boot = timed(
            lambda fit=fit: bootstrap(fit, rounds=args.rounds, seed=args.seed), reps
        )
        # baseline: a few rounds, scaled to --rounds (draws for all rounds are one call)
        a, b = counts.a, counts.b
        y = np.select([counts.outcome == OUTCOME_A, counts.outcome == OUTCOME_B], [1.0, 0.0], 0.5)
        w = counts.count.astype(float)
        few = args.baseline_rounds_for_scaling
        t_few, _, _ = timed(
            lambda a=a, b=b, y=y, w=w, k=k, few=few: baseline_bootstrap(a, b, y, w, k, few, 0), 1
        )
        out.append(
            {
                "models": k,
                "grouped_rows": len(w),
                "categories": fit.problem.n_categories,
                "engine_fit_s": t_fit,
                "engine_bootstrap_s": t_boot,
                "engine_chord_iterations": boot.diagnostics["chord_iterations"],
                "baseline_bootstrap_s_extrapolated": t_few * args.rounds / few,
                "speedup_extrapolated": t_few * args.rounds / few / t_boot,
            }
        )
        print(f"  scaling K={k}: engine fit {t_fit:.3f}s, bootstrap {t_boot:.3f}s", flush=True)
    return out


def report(res: dict) -> str:
    m, h = res["machine"], res["head_to_head"]
    g, f, bt = h["grouping"], h["fit"], h["bootstrap"]
    lines = [
        f"Machine: {m['cpu']}, nproc {m['nproc']}, {m['threads']}; {m['date']}; "
        f"Python {m['python']}, numpy {m['numpy']}, scipy {m['scipy']}",
        f"Data: {h['battles']:,} battles, {h['models']} models, {h['ties']:.0%} ties, "
        f"{h['grouped_rows']:,} grouped rows; {h['rounds']} bootstrap rounds; medians of repeats",
        "",
        "| step | (a) straightforward | (b) engine | ratio a/b |",
        "|---|---:|---:|---:|",
        f"| grouping (model keys) | {g['baseline_s']:.3f} s | {g['engine_s']:.3f} s | {g['baseline_s'] / g['engine_s']:.1f}x |",
        f"| grouping (integer ids) | - | {g['engine_int_ids_s']:.3f} s | - |",
        f"| one fit | {f['baseline_s'] * 1e3:.1f} ms | {f['engine_s'] * 1e3:.1f} ms | {f['baseline_s'] / f['engine_s']:.1f}x |",
        f"| {h['rounds']} bootstrap rounds | {bt['baseline_s']:.2f} s | {bt['engine_s']:.3f} s | {bt['speedup']:.1f}x |",
        "",
        f"Engine bootstrap: redraws alone {bt['engine_split_s']['redraws_s']:.3f} s; "
        f"chord iterations {bt['engine_chord_iterations']}; max gradient norm {bt['engine_max_grad_norm']:.1e}; "
        f"fit: {f['engine_iterations']} Newton iterations, gradient norm {f['engine_grad_norm']:.1e}",
        f"Agreement: fit ratings max |a-b| = {f['max_abs_rating_diff']:.4f} points; "
        f"intervals on the same redraws max |a-b| = {bt['same_draws_max_abs_bound_diff']:.4f} points "
        f"(per-round ratings {bt['same_draws_max_abs_round_rating_diff']:.4f}); "
        f"on each method's own redraws max {bt['own_draws_max_abs_bound_diff']:.3f}, "
        f"rms {bt['own_draws_rms_bound_diff']:.3f} points (Monte Carlo sd of a difference "
        f"~{bt['expected_mc_sd_of_bound_diff']:.2f}); mean interval width {bt['mean_interval_width']:.2f}",
    ]
    if res.get("scaling"):
        lines += [
            "",
            "| models | grouped rows | engine fit | engine bootstrap | (a) bootstrap, extrapolated | ratio |",
            "|---:|---:|---:|---:|---:|---:|",
        ]
        for s in res["scaling"]:
            lines.append(
                f"| {s['models']} | {s['grouped_rows']:,} | {s['engine_fit_s'] * 1e3:.0f} ms | "
                f"{s['engine_bootstrap_s']:.2f} s | {s['baseline_bootstrap_s_extrapolated']:.1f} s | "
                f"{s['speedup_extrapolated']:.1f}x |"
            )
    return "\n".join(lines)


def issue16(args) -> dict:
    import rating_comparisons as rc

    true = np.random.default_rng(args.seed).normal(1000.0, 100.0, args.models)
    counts = simulate_battles(true, args.battles, tie_rate=args.ties, seed=args.seed).grouped()
    out: dict = {}
    steps = [
        ("arena_rank", lambda: rc.arena_rank_plain(counts, args.rounds, args.repeats)),
        ("arena_rank_contextual", lambda: rc.arena_rank_contextual(args.battles, args.models, 3)),
        (
            "clustered",
            lambda: rc.clustered_cost(args.battles, args.models, args.users, args.rounds),
        ),
        ("robustness", lambda: rc.robustness_cost(counts)),
        ("coverage_heterogeneous", lambda: rc.coverage(args.sims, 60.0, 100, 500)),
        ("coverage_mild", lambda: rc.coverage(args.sims, 20.0, 100, 500)),
        ("coverage_independent", lambda: rc.coverage(args.sims, 0.0, 400, 500)),
        ("ipw", lambda: rc.ipw_study(args.sims // 5)),
        ("recovery", lambda: rc.recovery(args.sims // 2)),
    ]
    for name, step in steps:
        if args.skip_arena_rank and name.startswith("arena_rank"):
            continue
        if args.steps and name not in args.steps:
            continue
        t0 = time.perf_counter()
        out[name] = step()
        print(f"  {name}: {time.perf_counter() - t0:.1f}s", flush=True)
    return out


def report16(r: dict) -> str:
    lines = [""]
    if "arena_rank" in r:
        a = r["arena_rank"]
        lines += [
            "| step | (c) arena-rank | (b) engine | ratio c/b |",
            "|---|---:|---:|---:|",
            f"| one fit | {a['fit_s']['arena_rank']:.2f} s | {a['fit_s']['engine'] * 1e3:.1f} ms | {a['fit_s']['ratio']:.0f}x |",
            f"| sandwich | {a['sandwich_s']['arena_rank']:.3f} s | {a['sandwich_s']['engine'] * 1e3:.1f} ms | {a['sandwich_s']['ratio']:.0f}x |",
            f"| {a['bootstrap_s']['rounds']} bootstrap rounds | {a['bootstrap_s']['arena_rank_extrapolated']:.0f} s (extrapolated) | {a['bootstrap_s']['engine']:.2f} s | {a['bootstrap_s']['ratio']:.0f}x |",
            "",
            f"arena-rank first-call compile {a['compile_s']:.1f} s (not in the table). Agreement: ratings max |c-b| "
            f"{a['max_abs_rating_diff']:.4f}; sandwich bounds {a['max_abs_sandwich_bound_diff_default_reg']:.4f} "
            f"with arena-rank's default Hessian ridge (1e-5 x battles), {a['max_abs_sandwich_bound_diff_matched_reg']:.5f} "
            f"with it at 1e-10; bootstrap rounds on the same redraws max {a['same_draws_max_abs_round_rating_diff']:.4f} points",
        ]
    if "arena_rank_contextual" in r:
        c = r["arena_rank_contextual"]
        lines += [
            "",
            f"Contextual ({c['battles']:,} battles, {c['models']} models, 4 covariates): engine {c['cells_pooled']:,} cells, "
            f"grouping {c['engine_group_s']:.2f} s, fit + sandwich {c['engine_fit_and_sandwich_s']:.2f} s; "
            f"arena-rank (one row per battle) fit {c['arena_rank_fit_s']:.1f} s + sandwich {c['arena_rank_sandwich_s']:.1f} s: "
            f"{c['ratio_fit_and_sandwich']:.0f}x. Ratings max |c-b| {c['max_abs_rating_diff']:.3f}, coefficients "
            f"{c['max_abs_coef_diff']:.4f} ({c['max_coef_diff_in_se']:.2f} se). Clustered by user: {c['cells_by_user']:,} cells, "
            f"grouping {c['engine_user_group_s']:.1f} s, fit + clustered sandwich {c['engine_clustered_fit_s']:.1f} s",
        ]
    if "clustered" in r:
        c = r["clustered"]
        lines += [
            "",
            f"Clustered ({c['battles']:,} battles, {c['models']} models, {c['users']:,} users, {c['user_rows']:,} user rows): "
            f"grouping {c['group_s']:.2f} s; sandwich iid {c['iid_sandwich_s'] * 1e3:.1f} ms, clustered {c['clustered_sandwich_s'] * 1e3:.0f} ms; "
            f"{c['rounds']} rounds iid {c['iid_bootstrap_s']:.2f} s, cluster {c['cluster_bootstrap_s']:.2f} s "
            f"(straightforward cluster bootstrap {c['straightforward_cluster_bootstrap_s_extrapolated']:.0f} s: {c['ratio_cluster_bootstrap']:.0f}x); "
            f"sd clustered / iid {c['mean_sd_ratio_clustered_over_iid']:.2f} (sandwich), {c['mean_sd_ratio_cluster_bootstrap_over_iid']:.2f} (bootstrap)",
        ]
    if "robustness" in r:
        b = r["robustness"]
        lines += [
            "",
            f"Robustness: the top {b['places']} places against every lower model in {b['search_s']:.2f} s; "
            f"#1: {b['first']}",
        ]
    for key in ("coverage_heterogeneous", "coverage_mild", "coverage_independent"):
        if key in r:
            lines.append(f"{key}: " + ", ".join(f"{m} {v:.3f}" for m, v in r[key].items()))
    if "ipw" in r:
        lines.append(
            "ipw: "
            + "; ".join(
                f"{m} rmse {v['rmse']:.2f}, width {v['mean_width']:.2f}, coverage {v['coverage']:.3f}"
                for m, v in r["ipw"].items()
            )
        )
    if "recovery" in r:
        lines.append(f"recovery: {r['recovery']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--battles", type=int, default=1_000_000)
    p.add_argument("--models", type=int, default=100)
    p.add_argument("--ties", type=float, default=0.1)
    p.add_argument("--rounds", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=5, help="repeats for engine timings")
    p.add_argument("--baseline-repeats", type=int, default=3)
    p.add_argument(
        "--scaling", type=lambda s: [int(x) for x in s.split(",") if x], default=[100, 200, 300]
    )
    p.add_argument("--baseline-rounds-for-scaling", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--users", type=int, default=10_000, help="users in the clustered run")
    p.add_argument("--sims", type=int, default=500, help="simulated arenas for coverage")
    p.add_argument("--skip-arena-rank", action="store_true")
    p.add_argument(
        "--steps", type=lambda v: [x for x in v.split(",") if x], default=[],
        help="only these issue-16 steps (e.g. arena_rank,clustered)",
    )  # fmt: skip
    p.add_argument("--only-issue16", action="store_true", help="skip the (a)-(b) runs")
    p.add_argument("--json", type=Path, default=None, help="also write the results here")
    p.add_argument(
        "--quick", action="store_true", help="small smoke run (100k battles, 100 rounds)"
    )
    args = p.parse_args(argv)
    if args.quick:
        args.battles, args.rounds, args.repeats, args.baseline_repeats = 100_000, 100, 2, 1
        args.scaling, args.baseline_rounds_for_scaling = [50, 100], 5
        args.users, args.sims = 1000, 40

    res: dict = {"machine": machine()}
    if not args.only_issue16:
        print("head to head ...", flush=True)
        res["head_to_head"] = head_to_head(args)
        print("scaling ...", flush=True)
        res["scaling"] = scaling(args)
    print("issue 16 ...", flush=True)
    res["issue16"] = issue16(args)
    print()
    if not args.only_issue16:
        print(report(res))
    else:
        print(res["machine"])
    print(report16(res["issue16"]))
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
