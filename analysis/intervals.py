"""95% intervals for Bradley-Terry ratings: bootstrap and closed-form sandwich, iid or by user.

Computes, from a :class:`~analysis.bradley_terry.BTFit` (the fit on all data), per-model lower
and upper bounds, a centre (bootstrap median, or the fit itself for the sandwich) and the same
for the top-slot win probability of a position-aware fit.

Bootstrap: each round is one multinomial redraw of the grouped counts (N battles with
probabilities count / N, exactly; see ``resample``), refitted to the same gradient tolerance,
normalised like the fit, and the 2.5th / 97.5th percentiles taken over rounds (linear
interpolation). Normalisation of a round: its reference mean (see ``bradley_terry``) is set
to the fit's, except with ``anchor_mode="per_round"``, where the anchor is set to
``anchor_value`` in every round (its interval is then a point). With the default "shift"
anchor the board is the mean-normalised one moved by a constant, so the anchor has an
interval like any model. Rounds are seeded and reproducible, and the redraws follow the
categories in an order fixed by model *names*, so permuting the models changes nothing.

All rounds are solved together: a chord iteration starts every round at the full-data fit and
applies the full-data inverse Hessian (computed once), so a round costs a few gradient
evaluations and no linear algebra; rounds that stall, or whose Ford core differs from the
full data's (``core_check``), are finished with damped Newton. ``draws`` lets a caller supply
its own (rounds x rows) redraws of the counts' rows.

Sandwich: Cov = H^-1 B H^-1 with H the observed information (negative Hessian, including the
virtual ties of unbounded models) and B the centred sum over battles of score outer products,
(y - p)^2 x x^T; interval = rating +- 1.96 sd, with 400 / ln 10 converting to points. The
shift direction that H cannot see is removed by the normalisation.

User-clustered (``clustered=True``, counts with a ``user`` column): votes of one developer are
not independent (one casts hundreds, with preferences of their own), so the unit of
resampling is the user. The clustered sandwich is the leave-one-user-out (CR3) form of
``clustered``; the cluster bootstrap redraws n users with
replacement (one multinomial draw of n over the users) and each round's category weights are
the drawn users' summed weights -- one (categories x users) product per batch of rounds, so
the cost is that of the iid bootstrap plus O(nonzero user-category cells); the product is
dense when the users nearly fill the matrix (users in groups), which BLAS does much faster.

Weighted counts (``weights``): the bootstrap redraws battles and gives each the mean weight of
its category (exact when weights are constant per category, as for pair-level propensities);
the cluster bootstrap carries each user's exact weight sums.

Models outside the Ford core get the bounds of ``unbounded`` (infinite on the unbounded side).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.linalg.lapack import dpotrf, dpotri
from scipy.sparse import csr_matrix
from scipy.special import expit, ndtri

from analysis.bradley_terry import BTFit, normalise
from analysis.bt_problem import BTProblem
from analysis.bt_solve import chord, newton
from analysis.clustered import cluster_covariance
from analysis.core_check import CoreCheck
from analysis.resample import MultinomialSampler
from analysis.scale import SCALE
from analysis.unbounded import apply_unbounded_bounds

__all__ = ["IntervalResult", "bootstrap", "sandwich"]

# The cluster bootstrap's (categories x users) weights as a dense matrix when it has at most
# this many entries and at least one row of counts per this many of them.
_DENSE_MAX = 1 << 22
_DENSE_FILL = 16


@dataclass(frozen=True)
class IntervalResult:
    """Per-model interval (NaN for unrated models) and the top-slot interval if fitted."""

    method: str
    lower: np.ndarray
    upper: np.ndarray
    median: np.ndarray  # bootstrap median; the fit itself for the sandwich
    sd: np.ndarray  # bootstrap standard deviation, or sandwich standard error (points)
    top_slot: tuple[float, float, float] | None  # (lower, upper, median) of P(top wins)
    rounds: int
    seed: int | None
    samples: np.ndarray | None = field(default=None, repr=False)  # (rounds, models) ratings
    top_slot_samples: np.ndarray | None = field(default=None, repr=False)
    diagnostics: dict[str, Any] = field(default_factory=dict)
    clustered: bool = False  # True: users are the independent units
    clusters: int = 0  # users with battles (clustered only)


# --------------------------------------------------------------------------- sandwich
def sandwich(fit: BTFit, *, level: float = 0.95, clustered: bool = False) -> IntervalResult:
    """Closed-form (robust, "sandwich") intervals around ``fit.rating``; by user if
    ``clustered`` (the counts need a user column)."""
    z = float(ndtri(0.5 + level / 2.0))  # normal quantile (norm.ppf checks more, slower)
    prob = fit.problem
    k_all = len(fit.models)
    lower = np.full(k_all, np.nan)
    upper = np.full(k_all, np.nan)
    sd = np.full(k_all, np.nan)
    top = None
    clusters = 0
    if clustered and prob.row_user is None:
        raise ValueError("clustered intervals need counts with a user column")
    if prob.k > 0:
        theta = fit.theta
        h, meat = prob.information_and_meat(theta)
        h = prob.augment(h)
        if clustered:
            cov, clusters = cluster_covariance(prob, theta, h)
        else:
            cov = None
        omega = fit.round_normalisation()[0]
        if cov is None:
            # iid: only Var(theta_i - omega . theta) = v_i^T H^-1 B H^-1 v_i is needed, with
            # W = H^-1 (I - omega 1^T)^T: one SPD inverse and one product
            hinv = _spd_inverse(h)
            w = hinv[:, : prob.k] - (hinv[:, : prob.k] @ omega)[:, None]
            var = np.einsum("ij,ij->j", meat @ w, w)
            g_var = float(hinv[-1] @ meat @ hinv[-1]) if prob.has_gamma else 0.0
        else:
            c = 0.5 * (cov + cov.T)[: prob.k, : prob.k]
            c_omega = c @ omega
            var = np.diag(c) - 2.0 * c_omega + omega @ c_omega
            g_var = float(cov[-1, -1]) if prob.has_gamma else 0.0
        se = SCALE * np.sqrt(np.maximum(var, 0.0))
        r = fit.rating[prob.fitted]
        lower[prob.fitted], upper[prob.fitted], sd[prob.fitted] = r - z * se, r + z * se, se
        if prob.has_gamma:
            g, g_se = theta[prob.k], float(np.sqrt(max(g_var, 0.0)))
            top = (float(expit(g - z * g_se)), float(expit(g + z * g_se)), float(expit(g)))
    lower, upper = apply_unbounded_bounds(fit, lower, upper, level=level)
    return IntervalResult(
        method="sandwich",
        lower=lower,
        upper=upper,
        median=fit.rating.copy(),
        sd=sd,
        top_slot=top,
        rounds=0,
        seed=None,
        clustered=clustered,
        clusters=clusters,
    )


def _spd_inverse(h: np.ndarray) -> np.ndarray:
    """Inverse of a symmetric positive definite matrix by Cholesky (LAPACK potrf/potri)."""
    c, info = dpotrf(h, lower=False)
    if info == 0:
        inv, info = dpotri(c, lower=False)
        if info == 0:
            return np.asarray(np.triu(inv) + np.triu(inv, 1).T)
    return np.asarray(np.linalg.inv(h))


# --------------------------------------------------------------------------- bootstrap
def _rows_to_categories(prob: BTProblem, draws: np.ndarray) -> np.ndarray:
    """(rounds, rows) redraws of the counts' rows -> (M, rounds) category counts."""
    draws = np.asarray(draws)
    if draws.ndim != 2 or draws.shape[1] != len(prob.row_category):
        raise ValueError("draws must have shape (rounds, number of count rows)")
    keep = prob.row_category >= 0
    m = csr_matrix(
        (np.ones(keep.sum()), (prob.row_category[keep], np.flatnonzero(keep))),
        shape=(prob.n_categories, len(prob.row_category)),
    )
    return np.asarray(m @ draws.T.astype(float))


def _rounds(prob: BTProblem, rounds: int, draws: np.ndarray | None, clustered: bool) -> int:
    """How many rounds the bootstrap runs (the given draws' count, if any); checks the options."""
    if draws is not None:
        if clustered:
            raise ValueError("draws are redraws of battles: not with clustered=True")
        rounds = int(np.asarray(draws).shape[0])
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    if clustered and prob.row_user is None:
        raise ValueError("clustered intervals need counts with a user column")
    return rounds


def _source(prob: BTProblem, draws: np.ndarray | None, clustered: bool) -> tuple[Source, int]:
    """Where the rounds' redraws come from, and how many user clusters it resamples."""
    if clustered:
        return _user_source(prob)
    if draws is not None:
        return _row_source(prob, np.asarray(draws)), 0
    return _battle_source(prob), 0


def bootstrap(
    fit: BTFit,
    *,
    rounds: int = 1000,
    seed: int | None = 0,
    gtol: float = 1e-8,
    draws: np.ndarray | None = None,
    keep_samples: bool = True,
    clustered: bool = False,
    level: float = 0.95,
) -> IntervalResult:
    """Percentile bootstrap intervals, ``rounds`` redraws of the battles, or of the users if
    ``clustered`` (see the module docstring)."""
    prob = fit.problem
    k_all = len(fit.models)
    rounds = _rounds(prob, rounds, draws, clustered)
    samples = np.full((rounds, k_all), np.nan)
    top_samples = np.full(rounds, np.nan) if prob.has_gamma else None
    clusters = 0
    diag: dict[str, Any] = {
        "chord_iterations": 0,  # most chord steps any chunk of rounds needed
        "newton_rounds": 0,  # rounds finished with Newton after the chord stalled
        "other_core_rounds": 0,  # rounds whose Ford core was smaller than the full data's
        "unconverged_rounds": 0,  # rounds left above gtol (none expected)
        "max_grad_norm": 0.0,
    }
    if prob.k > 0:
        source, clusters = _source(prob, draws, clustered)
        _run_rounds(fit, rounds, seed, gtol, source, samples, top_samples, diag)
    tail = 50.0 * (1.0 - level)
    lower, upper = np.percentile(samples, [tail, 100.0 - tail], axis=0)
    lower, upper = apply_unbounded_bounds(fit, lower, upper, level=level)
    top = None
    if top_samples is not None and prob.k > 0:
        lo, hi, med = np.percentile(top_samples, [tail, 100.0 - tail, 50.0])
        top = (float(lo), float(hi), float(med))
    return IntervalResult(
        method="bootstrap",
        lower=lower,
        upper=upper,
        median=np.median(samples, axis=0),
        sd=samples.std(axis=0, ddof=1) if rounds > 1 else np.full(k_all, np.nan),
        top_slot=top,
        rounds=rounds,
        seed=seed,
        samples=samples if keep_samples else None,
        top_slot_samples=top_samples if keep_samples else None,
        diagnostics=diag,
        clustered=clustered,
        clusters=clusters,
    )


# A source of redraws: (rounds, generator) -> (M, rounds) category weights, and per category
# whether a redraw can leave it empty (which the core check needs).
Source = tuple[Callable[[int, int, np.random.Generator], np.ndarray], np.ndarray]


def _battle_source(prob: BTProblem) -> Source:
    """Multinomial redraws of the battles, in the name-based category order."""
    sampler = MultinomialSampler(prob.cat_count[prob.canon])
    may_vanish = np.empty(prob.n_categories, dtype=bool)
    may_vanish[prob.canon] = sampler.can_be_zero()

    def draw(_start: int, rc: int, rng: np.random.Generator) -> np.ndarray:
        x = np.empty((prob.n_categories, rc))
        x[prob.canon] = sampler.draw(rc, rng).T
        return np.asarray(x * prob.cat_scale[:, None])

    return draw, may_vanish


def _row_source(prob: BTProblem, draws: np.ndarray) -> Source:
    def draw(start: int, rc: int, _rng: np.random.Generator) -> np.ndarray:
        return np.asarray(
            _rows_to_categories(prob, draws[start : start + rc]) * prob.cat_scale[:, None]
        )

    return draw, np.ones(prob.n_categories, dtype=bool)


def _user_source(prob: BTProblem) -> tuple[Source, int]:
    """Users redrawn with replacement (multinomial over the users with battles)."""
    if prob.row_user is None:
        raise ValueError("a user bootstrap needs the problem's users")
    m, n_users = prob.n_categories, int(prob.row_user.max()) + 1 if len(prob.row_user) else 0
    xt: np.ndarray | csr_matrix
    if m * n_users <= _DENSE_MAX and _DENSE_FILL * len(prob.row_user) >= m * n_users:
        # Users in groups fill most of the (categories x users) matrix: a dense product runs
        # much faster than the sparse one, whose cost grew with the filled entries as the
        # arena grew. Integer counts: the same sums.
        cell = prob.row_user * m
        cell += prob.row_category
        keep = prob.row_category >= 0
        if not keep.all():  # rows of models outside the fit
            cell = np.where(keep, cell, n_users * m)
        dense = np.bincount(cell, weights=prob.row_weight, minlength=n_users * m + 1)
        dense = dense[: n_users * m].reshape(n_users, m)
        active = np.flatnonzero(dense.sum(axis=1) > 0)
        xt = np.ascontiguousarray(dense[active].T)
    else:
        x = prob.cluster_weights()
        if x is None:
            raise ValueError("a user bootstrap needs the problem's users")
        active = np.flatnonzero(np.asarray(x.sum(axis=1)).ravel() > 0)
        xt = csr_matrix(x[active].T)  # (M, users)
    sampler = MultinomialSampler(np.ones(len(active), dtype=np.int64))

    def draw(_start: int, rc: int, rng: np.random.Generator) -> np.ndarray:
        w = sampler.draw(rc, rng).T.astype(float)  # (users, rounds)
        return np.asarray(xt @ w)

    return (draw, np.ones(prob.n_categories, dtype=bool)), len(active)


def _solve_full_core(
    prob: BTProblem,
    theta: np.ndarray,
    n: np.ndarray,
    s: np.ndarray,
    std: np.ndarray,
    inv_h: np.ndarray,
    gtol: float,
    diag: dict[str, Any],
) -> None:
    """Rounds ``std`` (same core as the full data): chord steps, Newton where they stall."""
    res = chord(prob, theta[:, std], n[:, std], s[:, std], inv_h, gtol=gtol)
    diag["chord_iterations"] = max(diag["chord_iterations"], res.iterations)
    th = res.theta
    bad = np.flatnonzero(~res.converged)
    if len(bad):
        diag["newton_rounds"] += len(bad)
        nb = newton(prob, th[:, bad], n[:, std[bad]], s[:, std[bad]], gtol=gtol)
        th[:, bad] = nb.theta
        res.grad_norm[bad] = nb.grad_norm
    theta[:, std] = th
    diag["max_grad_norm"] = max(diag["max_grad_norm"], float(res.grad_norm.max()))
    diag["unconverged_rounds"] += int(np.sum(res.grad_norm > gtol))


def _solve_other_cores(
    prob: BTProblem,
    theta: np.ndarray,
    n: np.ndarray,
    s: np.ndarray,
    cores: list[np.ndarray | None],
    others: np.ndarray,
    gtol: float,
    diag: dict[str, Any],
) -> None:
    """Rounds ``others`` (a smaller core): Newton, grouped by core."""
    groups: dict[bytes, list[int]] = {}
    round_cores: dict[bytes, np.ndarray] = {}
    for r in others:
        core_r = cores[r]
        if core_r is None:
            raise RuntimeError("a round that differs from the full fit has its own core")
        key = np.packbits(core_r).tobytes()
        groups.setdefault(key, []).append(int(r))
        round_cores[key] = core_r
    for key, members in groups.items():
        idx = np.array(members)
        variant = prob.with_core(round_cores[key])
        nb = newton(variant, theta[:, idx], n[:, idx], s[:, idx], gtol=gtol)
        theta[:, idx] = nb.theta
        diag["other_core_rounds"] += len(idx)
        diag["max_grad_norm"] = max(diag["max_grad_norm"], float(nb.grad_norm.max()))
        diag["unconverged_rounds"] += int(np.sum(~nb.converged))


def _run_rounds(
    fit: BTFit,
    rounds: int,
    seed: int | None,
    gtol: float,
    source: Source,
    samples: np.ndarray,
    top_samples: np.ndarray | None,
    diag: dict[str, Any],
) -> None:
    prob = fit.problem
    theta_hat = fit.theta[:, None]
    n_full, _ = prob.full_stats()
    inv_h = np.linalg.inv(prob.augment(prob.hessian(theta_hat, n_full)[0]))
    omega, centre = fit.round_normalisation()
    rng = np.random.default_rng(seed)
    draw, may_vanish = source
    check = CoreCheck(prob, may_vanish)
    step = min(256, max(32, (1 << 20) // max(prob.n_pairs, 1)))
    for start in range(0, rounds, step):
        rc = min(step, rounds - start)
        x = np.ascontiguousarray(draw(start, rc, rng))
        n, s = prob.pair_stats(x)
        theta = np.repeat(theta_hat, rc, axis=1)
        cores = check.cores(prob, x, n)
        same = np.array(
            [c is None or np.array_equal(c, prob.core_local) for c in cores], dtype=bool
        )
        std = np.flatnonzero(same)
        if len(std):
            _solve_full_core(prob, theta, n, s, std, inv_h, gtol, diag)
        _solve_other_cores(prob, theta, n, s, cores, np.flatnonzero(~same), gtol, diag)
        ratings = normalise(theta[: prob.k], omega=omega, value=centre)
        samples[start : start + rc][:, prob.fitted] = ratings.T
        if top_samples is not None:
            top_samples[start : start + rc] = expit(theta[prob.k])
