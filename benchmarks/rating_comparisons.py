"""Issue 16 parts of ``bench_rating.py``: arena-rank side by side, clustered and contextual
costs, and the long statistical runs (coverage, IPW, coefficient recovery, robustness).

Imported by ``bench_rating.py`` (which pins BLAS threads); not run on its own. arena-rank
(PyPI ``arena-rank``, the ``bench`` extra) is LMArena's JAX implementation: ``BradleyTerry``
(L-BFGS on grouped rows, sandwich, multinomial bootstrap with one L-BFGS fit per round in a
process pool) and ``ContextualBradleyTerry`` (one row per battle, features, ridge). Both are
run with one worker (``n_jobs=1``) and XLA pinned to one thread, on the engine's data.
"""

from __future__ import annotations

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault(
    "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
)

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from analysis.bradley_terry import fit_bt
from analysis.contextual import fit_contextual
from analysis.grouping import OUTCOME_A, OUTCOME_B, GroupedCounts
from analysis.intervals import bootstrap, sandwich
from analysis.resample import MultinomialSampler
from analysis.robustness import place_robustness
from analysis.scale import SCALE
from analysis.simulate_context import simulate_contextual
from analysis.simulate_sampler import simulate_latency_sampler
from analysis.simulate_users import simulate_user_arena
from analysis.weights import inverse_pair_count_weights


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def _y(g: GroupedCounts) -> np.ndarray:
    return np.select([g.outcome == OUTCOME_A, g.outcome == OUTCOME_B], [1.0, 0.0], 0.5)


# --------------------------------------------------------------------------- arena-rank
def arena_rank_plain(g: GroupedCounts, rounds: int, repeats: int) -> dict[str, Any]:
    import jax.numpy as jnp
    from arena_rank.models.bradley_terry import BradleyTerry, fit_single_bootstrap_sample
    from arena_rank.utils.data_utils import PairDataset

    k = g.n_models
    counts = g.count.astype(float)
    ds = PairDataset(
        competitors=list(g.models),
        pairs=jnp.array(np.c_[g.a, g.b], dtype=jnp.int32),
        outcomes=jnp.array(_y(g)),
        counts=jnp.array(counts),
        weights=jnp.ones(len(counts)),
        opt_weights=jnp.array(counts),
    )
    t0 = time.perf_counter()
    BradleyTerry(n_competitors=k).fit(ds)  # the first call compiles
    compile_s = time.perf_counter() - t0

    def fit_ar(reg: float = 1e-5) -> Any:
        return BradleyTerry(n_competitors=k, hessian_reg=reg).fit(ds)

    t_fit, model = timed(fit_ar, repeats)
    model.compute_ratings_and_cis(ds, ci_method="sandwich")  # compile the sandwich
    t_sw, res = timed(lambda: model.compute_ratings_and_cis(ds, ci_method="sandwich"), repeats)
    matched = fit_ar(1e-10).compute_ratings_and_cis(ds, ci_method="sandwich")

    fit = fit_bt(g)
    t_fit_e, _ = timed(lambda: fit_bt(g), repeats)
    t_sw_e, sw = timed(lambda: sandwich(fit), repeats)
    t_boot_e, boot = timed(lambda: bootstrap(fit, rounds=rounds, seed=0), max(1, repeats // 2))
    # arena-rank's bootstrap: one L-BFGS fit per round; a few rounds on the engine's own
    # redraws of the rows (so the same rounds can be compared), scaled to ``rounds``
    few = 8
    draws = MultinomialSampler(g.count).draw(few, np.random.default_rng(1))
    model0 = BradleyTerry(n_competitors=k)
    fit_single_bootstrap_sample(jnp.array(draws[0], dtype=float), model0, ds)  # compile
    t0 = time.perf_counter()
    ar_rounds = np.array(
        [
            np.asarray(
                fit_single_bootstrap_sample(jnp.array(d, dtype=float), model0, ds)["ratings"]
            )
            for d in draws
        ]
    )
    t_round_ar = (time.perf_counter() - t0) / few
    same = bootstrap(fit, draws=draws)
    ar_ratings = 1000.0 + SCALE * (ar_rounds - ar_rounds.mean(axis=1, keepdims=True))
    ar_r = np.asarray(res["ratings"])
    return {
        "compile_s": compile_s,
        "fit_s": {"arena_rank": t_fit, "engine": t_fit_e, "ratio": t_fit / t_fit_e},
        "sandwich_s": {"arena_rank": t_sw, "engine": t_sw_e, "ratio": t_sw / t_sw_e},
        "bootstrap_s": {
            "arena_rank_extrapolated": t_round_ar * rounds,
            "engine": t_boot_e,
            "ratio": t_round_ar * rounds / t_boot_e,
            "rounds": rounds,
        },
        "max_abs_rating_diff": float(np.max(np.abs(ar_r - fit.rating))),
        "max_abs_sandwich_bound_diff_default_reg": float(
            np.max(np.abs(np.asarray(res["rating_lower"]) - sw.lower))
        ),
        "max_abs_sandwich_bound_diff_matched_reg": float(
            np.max(np.abs(np.asarray(matched["rating_lower"]) - sw.lower))
        ),
        "same_draws_max_abs_round_rating_diff": float(np.max(np.abs(ar_ratings - same.samples))),
        "engine_boot_width": float(np.mean(boot.upper - boot.lower)),
    }


def arena_rank_contextual(n: int, k: int, repeats: int) -> dict[str, Any]:
    import jax.numpy as jnp
    from arena_rank.models.contextual_bradley_terry import ContextualBradleyTerry
    from arena_rank.utils.data_utils import ContextualPairDataset

    names = ("top", "length", "latency", "slow_top")
    coef = {"top": 1.2, "length": 0.8, "latency": -0.6, "slow_top": 0.3}
    r = np.random.default_rng(0).normal(1000.0, 100.0, k)
    arena = simulate_contextual(r, n, coef=coef, n_users=10_000, seed=0)
    x = arena.features[:, [arena.feature_names.index(f) for f in names]]
    t_group, pooled = timed(lambda: arena.counts(names, with_users=False), 1)
    t_fit_e, fit = timed(lambda: fit_contextual(pooled), repeats)
    t_user_group, by_user = timed(lambda: arena.counts(names), 1)
    t_cl_e, fit_cl = timed(lambda: fit_contextual(by_user), 1)
    y = (arena.outcome == OUTCOME_A).astype(float)
    ds = ContextualPairDataset(
        competitors=list(arena.models),
        pairs=jnp.array(np.c_[arena.a, arena.b], dtype=jnp.int32),
        outcomes=jnp.array(y),
        features=jnp.array(x),
        weights=jnp.ones(n),
    )

    def fit_ar() -> Any:
        # reg on the mean loss: 1 / n is the engine's ridge of one battle
        return ContextualBradleyTerry(n_competitors=k, n_features=len(names), reg=1.0 / n).fit(ds)

    fit_ar()  # compile
    t_fit_ar, model = timed(fit_ar, max(1, repeats // 2))
    model.compute_ratings_and_cis(ds, ci_method="sandwich")  # compile
    t_sw_ar, res = timed(lambda: model.compute_ratings_and_cis(ds, ci_method="sandwich"), 1)
    ar_r = np.asarray(res["ratings"])
    ar_r = ar_r - ar_r.mean() + 1000.0
    return {
        "battles": n,
        "models": k,
        "cells_pooled": len(pooled.count),
        "cells_by_user": len(by_user.count),
        "engine_group_s": t_group,
        "engine_fit_and_sandwich_s": t_fit_e,
        "engine_user_group_s": t_user_group,
        "engine_clustered_fit_s": t_cl_e,
        "arena_rank_fit_s": t_fit_ar,
        "arena_rank_sandwich_s": t_sw_ar,
        "ratio_fit_and_sandwich": (t_fit_ar + t_sw_ar) / t_fit_e,
        "max_abs_rating_diff": float(np.max(np.abs(ar_r - fit.rating))),
        "max_abs_coef_diff": float(np.max(np.abs(np.asarray(res["coeffs"]) - fit.coef))),
        "max_coef_diff_in_se": float(
            np.max(np.abs(np.asarray(res["coeffs"]) - fit.coef) / fit.coef_se)
        ),
        "coef": fit.coef.tolist(),
        "coef_se_iid": fit.coef_se.tolist(),
        "coef_se_clustered": fit_cl.coef_se.tolist(),
        "true_coef": [coef[f] for f in names],
    }


# --------------------------------------------------------------------------- clustered
def _lbfgs(a: np.ndarray, b: np.ndarray, y: np.ndarray, w: np.ndarray, k: int) -> np.ndarray:
    def loss(r: np.ndarray) -> tuple[float, np.ndarray]:
        z = r[a] - r[b]
        g = -w * (y - expit(z))
        grad = np.bincount(a, weights=g, minlength=k) - np.bincount(b, weights=g, minlength=k)
        return float(-(w * (y * log_expit(z) + (1 - y) * log_expit(-z))).sum()), grad

    x = minimize(loss, np.zeros(k), jac=True, method="L-BFGS-B", options={"gtol": 1e-6}).x
    return 1000.0 + SCALE * (x - x.mean())


def clustered_cost(n: int, k: int, users: int, rounds: int) -> dict[str, Any]:
    r = np.random.default_rng(0).normal(1000.0, 100.0, k)
    arena = simulate_user_arena(r, n, n_users=users, pref_sd=20.0, pareto_shape=1.5, seed=0)
    t_group, g = timed(lambda: arena.grouped(), 1)
    fit = fit_bt(g)
    t_iid_sw, iid = timed(lambda: sandwich(fit), 3)
    t_cl_sw, cl = timed(lambda: sandwich(fit, clustered=True), 3)
    t_iid_b, _ = timed(lambda: bootstrap(fit, rounds=rounds, seed=0, keep_samples=False), 1)
    t_cl_b, clb = timed(
        lambda: bootstrap(fit, rounds=rounds, seed=0, clustered=True, keep_samples=False), 1
    )
    # straightforward cluster bootstrap: users redrawn, one L-BFGS fit per round (a few)
    pooled = g.pooled()
    y = _y(pooled)
    few = 5
    rng = np.random.default_rng(0)
    row_key = {
        (int(a), int(b), int(o)): i
        for i, (a, b, o) in enumerate(zip(pooled.a, pooled.b, pooled.outcome, strict=True))
    }
    row_of = np.array(
        [row_key[(int(a), int(b), int(o))] for a, b, o in zip(g.a, g.b, g.outcome, strict=True)]
    )
    t0 = time.perf_counter()
    for _ in range(few):
        w_user = np.bincount(rng.integers(0, g.n_users, g.n_users), minlength=g.n_users)
        w = np.bincount(row_of, weights=g.count * w_user[g.user], minlength=len(y))
        _lbfgs(pooled.a, pooled.b, y, w, k)
    t_base = (time.perf_counter() - t0) / few * rounds
    return {
        "battles": n,
        "models": k,
        "users": users,
        "user_rows": len(g.count),
        "pooled_rows": len(pooled.count),
        "group_s": t_group,
        "iid_sandwich_s": t_iid_sw,
        "clustered_sandwich_s": t_cl_sw,
        "iid_bootstrap_s": t_iid_b,
        "cluster_bootstrap_s": t_cl_b,
        "straightforward_cluster_bootstrap_s_extrapolated": t_base,
        "ratio_cluster_bootstrap": t_base / t_cl_b,
        "rounds": rounds,
        "mean_sd_ratio_clustered_over_iid": float(np.mean(cl.sd / iid.sd)),
        "mean_sd_ratio_cluster_bootstrap_over_iid": float(np.mean(clb.sd / iid.sd)),
    }


# --------------------------------------------------------------------------- statistics
def coverage(sims: int, pref_sd: float, n_users: int, rounds: int) -> dict[str, float]:
    ratings = np.linspace(850.0, 1150.0, 8)
    hits = {"iid_sandwich": 0, "clustered_sandwich": 0, "iid_bootstrap": 0, "cluster_bootstrap": 0}
    for seed in range(sims):
        arena = simulate_user_arena(
            ratings, 5000, n_users=n_users, pref_sd=pref_sd, tie_rate=0.1, seed=10_000 + seed
        )
        fit = fit_bt(arena.grouped())
        for name, iv in (
            ("iid_sandwich", sandwich(fit)),
            ("clustered_sandwich", sandwich(fit, clustered=True)),
            ("iid_bootstrap", bootstrap(fit, rounds=rounds, seed=seed, keep_samples=False)),
            (
                "cluster_bootstrap",
                bootstrap(fit, rounds=rounds, seed=seed, clustered=True, keep_samples=False),
            ),
        ):
            hits[name] += int(np.sum((iv.lower <= arena.truth) & (arena.truth <= iv.upper)))
    return {key: v / (sims * len(ratings)) for key, v in hits.items()}


def ipw_study(sims: int) -> dict[str, dict[str, float]]:
    k = 8
    ratings = np.linspace(900.0, 1100.0, k)
    lat = np.log(np.array([0.4, 2.5, 0.8, 1.0, 2.0, 0.6, 1.5, 1.2]))
    out: dict[str, dict[str, list[float]]] = {
        m: {"err": [], "width": [], "hit": []} for m in ("unweighted", "ipw", "pair_count")
    }
    for seed in range(sims):
        arena = simulate_latency_sampler(
            ratings, 40_000, log_latency=lat, latency_sd=0.6, latency_effect=0.7, tau=0.5, seed=seed
        )
        for name, g in (
            ("unweighted", arena.grouped()),
            ("ipw", arena.grouped(ipw=True)),
            ("pair_count", inverse_pair_count_weights(arena.grouped())),
        ):
            fit = fit_bt(g)
            iv = sandwich(fit, clustered=True)
            out[name]["err"] += (fit.rating - arena.truth).tolist()
            out[name]["width"].append(float(np.mean(iv.upper - iv.lower)))
            out[name]["hit"] += ((iv.lower <= arena.truth) & (arena.truth <= iv.upper)).tolist()
    return {
        name: {
            "rmse": float(np.sqrt(np.mean(np.square(v["err"])))),
            "max_abs_error": float(np.max(np.abs(v["err"]))),
            "mean_width": float(np.mean(v["width"])),
            "coverage": float(np.mean(v["hit"])),
        }
        for name, v in out.items()
    }


def recovery(sims: int) -> dict[str, Any]:
    names = ("top", "length", "latency", "slow_top")
    coef = {"top": 1.2, "length": 0.8, "latency": -0.6, "slow_top": 0.3}
    ratings = np.linspace(900.0, 1100.0, 8)
    hits, est, rating_hits = np.zeros(len(names)), [], 0
    for seed in range(sims):
        arena = simulate_contextual(ratings, 20_000, coef=coef, n_users=300, seed=5000 + seed)
        fit = fit_contextual(arena.counts(names))
        true = np.array([coef[f] for f in names])
        hits += (fit.coef_lower <= true) & (true <= fit.coef_upper)
        rating_hits += int(np.sum((fit.lower <= arena.truth) & (arena.truth <= fit.upper)))
        est.append(fit.coef)
    e = np.array(est)
    return {
        "true": [coef[f] for f in names],
        "mean_estimate": e.mean(axis=0).tolist(),
        "sd_estimate": e.std(axis=0).tolist(),
        "coverage": dict(zip(names, (hits / sims).tolist(), strict=True)),
        "rating_coverage": rating_hits / (sims * len(ratings)),
    }


def robustness_cost(g: GroupedCounts) -> dict[str, Any]:
    fit = fit_bt(g)
    t_all, holds = timed(lambda: place_robustness(fit, places=3), 1)
    return {
        "places": len(holds),
        "search_s": t_all,
        "first": holds[0].to_dict() if holds else None,
    }
