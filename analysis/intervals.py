"""95% intervals for Bradley-Terry ratings: bootstrap and closed-form sandwich.

Computes, from a :class:`~analysis.bradley_terry.BTFit` (the fit on all data), per-model lower
and upper bounds, a centre (bootstrap median, or the fit itself for the sandwich) and the same
for the top-slot win probability of a position-aware fit.

Bootstrap: each round is one multinomial redraw of the grouped counts (N battles with
probabilities count / N, exactly; see ``resample``), refitted to the same gradient tolerance,
normalised like the fit, and the 2.5th / 97.5th percentiles taken over rounds (linear
interpolation). Normalisation of a round: its mean is set to the fit's mean, except with
``anchor_mode="per_round"``, where the anchor is set to ``anchor_value`` in every round (its
interval is then a point). With the default "shift" anchor the board is the mean-normalised
one moved by a constant, so the anchor has an interval like any model. Rounds are seeded and reproducible. All rounds are solved together: a
chord iteration starts every round at the full-data fit and applies the full-data inverse
Hessian (computed once), so a round costs a few gradient evaluations and no linear algebra;
rounds that stall, or whose Ford core differs from the full data's, are finished with damped
Newton. ``draws`` lets a caller supply its own (rounds x rows) redraws of the counts' rows.

Sandwich: Cov = H^-1 B H^-1 with H the observed information (negative Hessian, including the
virtual ties of unbounded models) and B the centred sum over battles of score outer products,
(y - p)^2 x x^T; interval = rating +- 1.96 sd, with 400 / ln 10 converting to points. The
shift direction that H cannot see is removed by the normalisation (mean, or the anchor for
``anchor_mode="per_round"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import expit
from scipy.stats import norm

from analysis.bradley_terry import SCALE, BTFit, normalise
from analysis.bt_problem import BTProblem
from analysis.resample import MultinomialSampler

__all__ = ["IntervalResult", "bootstrap", "sandwich"]


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
    diagnostics: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- sandwich
def sandwich(fit: BTFit, *, level: float = 0.95) -> IntervalResult:
    """Closed-form (robust, "sandwich") intervals around ``fit.rating``."""
    z = float(norm.ppf(0.5 + level / 2.0))
    prob = fit.problem
    k_all = len(fit.models)
    lower = np.full(k_all, np.nan)
    upper = np.full(k_all, np.nan)
    sd = np.full(k_all, np.nan)
    top = None
    if prob.k > 0:
        theta = fit.theta
        n, _ = prob.full_stats()
        h = prob.augment(prob.hessian(theta[:, None], n)[0])
        hinv = np.linalg.inv(h)
        cov = hinv @ prob.meat(theta) @ hinv
        cov = 0.5 * (cov + cov.T)
        t = _normalisation_map(prob.k, fit.round_normalisation()[0])
        cov_r = SCALE**2 * (t @ cov[: prob.k, : prob.k] @ t.T)
        se = np.sqrt(np.maximum(np.diag(cov_r), 0.0))
        r = fit.rating[prob.fitted]
        lower[prob.fitted], upper[prob.fitted], sd[prob.fitted] = r - z * se, r + z * se, se
        if prob.has_gamma:
            g, g_se = theta[prob.k], float(np.sqrt(max(cov[prob.k, prob.k], 0.0)))
            top = (float(expit(g - z * g_se)), float(expit(g + z * g_se)), float(expit(g)))
    return IntervalResult(
        method="sandwich",
        lower=lower,
        upper=upper,
        median=fit.rating.copy(),
        sd=sd,
        top_slot=top,
        rounds=0,
        seed=None,
    )


def _normalisation_map(k: int, anchor_local: int | None) -> np.ndarray:
    """Matrix T with rating - value = SCALE * T @ theta (mean or anchor fixed)."""
    t = np.eye(k)
    if anchor_local is None:
        t -= 1.0 / k
    else:
        t[:, anchor_local] -= 1.0
    return t


# --------------------------------------------------------------------------- bootstrap
class _CoreCheck:
    """Finds rounds whose Ford core is smaller than the full data's (rare on big data).

    A redraw can only remove battles, so beats-graph edges can only vanish and strongly
    connected parts can only split: a round's core is the largest strongly connected part
    of the full-data core in that round. An edge u -> v that vanishes cannot split anything
    while a detour u -> w -> v survives; each edge gets the detour with the most battles, and
    only rounds that lose an edge together with its detour get a full strong-connectivity test.
    """

    def __init__(self, prob: BTProblem, may_vanish: np.ndarray) -> None:
        """``may_vanish``: bool per category, True if a redraw can leave it at zero."""
        k = max(prob.k, 1)
        self.k = prob.k
        self.core = prob.core_local
        first, second = prob.pi[prob.cat_pair], prob.pj[prob.cat_pair]
        code = prob.cat_code
        src = np.concatenate([first[code != 2], second[code != 0]])
        dst = np.concatenate([second[code != 2], first[code != 0]])
        cat = np.concatenate([np.flatnonzero(code != 2), np.flatnonzero(code != 0)])
        inside = self.core[src] & self.core[dst] if prob.k else np.zeros(0, dtype=bool)
        ukey, edge = np.unique(src[inside] * k + dst[inside], return_inverse=True)
        self.src, self.dst = ukey // k, ukey % k  # sorted by src
        n_edges = len(ukey)
        self.map = csr_matrix(
            (np.ones(len(edge)), (edge, cat[inside])), shape=(n_edges, prob.n_categories)
        )
        # an edge can only vanish if every category behind it can be zero
        safe = np.asarray(self.map @ (~may_vanish).astype(float)) > 0
        self.watched = np.flatnonzero(~safe)
        self.watch = self.map[self.watched]
        self.detour = self._detours(prob)

    def _detours(self, prob: BTProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each watched edge u -> v: edges u -> w and w -> v maximising the smaller count."""
        k, n_w = self.k, len(self.watched)
        first, second, has = np.zeros(n_w, np.int64), np.zeros(n_w, np.int64), np.zeros(n_w, bool)
        if n_w == 0:
            return first, second, has
        support = np.zeros((k, k), dtype=np.float32)
        support[self.src, self.dst] = np.asarray(self.map @ prob.cat_count.astype(float))
        edge_id = np.full((k, k), -1, dtype=np.int64)
        edge_id[self.src, self.dst] = np.arange(len(self.src))
        support_t = np.ascontiguousarray(support.T)
        block = max(1, (1 << 22) // max(k, 1))
        for lo in range(0, n_w, block):
            e = self.watched[lo : lo + block]
            u, v = self.src[e], self.dst[e]
            score = support[u]
            np.minimum(score, support_t[v], out=score)
            w = score.argmax(axis=1)
            ok = score[np.arange(len(e)), w] > 0
            first[lo : lo + block] = np.where(ok, edge_id[u, w], 0)
            second[lo : lo + block] = np.where(ok, edge_id[w, v], 0)
            has[lo : lo + block] = ok
        return first, second, has

    def cores(self, prob: BTProblem, x: np.ndarray, n: np.ndarray) -> list[np.ndarray | None]:
        """Per round (columns of ``x``): None if the core is intact, else the round's core."""
        out: list[np.ndarray | None] = [None] * x.shape[1]
        if len(self.watched) == 0:
            return out
        live_w = np.asarray(self.watch @ x) > 0
        if live_w.all():
            return out
        live = np.ones((len(self.src), x.shape[1]), dtype=bool)
        live[self.watched] = live_w
        d1, d2, has = self.detour
        broken = ~live_w & ~(has[:, None] & live[d1] & live[d2])
        suspects = np.flatnonzero(broken.any(axis=0))
        core_idx = np.flatnonzero(self.core)
        for r in suspects:
            alive = live[:, r]
            src, dst = self.src[alive], self.dst[alive]
            indptr = np.searchsorted(src, np.arange(self.k + 1))
            graph = csr_matrix((np.ones(len(dst)), dst, indptr), shape=(self.k, self.k))
            _, labels = connected_components(graph, directed=True, connection="strong")
            lab = labels[core_idx]
            if np.all(lab == lab[0]):
                continue
            out[r] = _largest_part(labels, core_idx, prob.pi, prob.pj, n[:, r], self.k)
        return out


def _largest_part(
    labels: np.ndarray, members: np.ndarray, pi: np.ndarray, pj: np.ndarray, n: np.ndarray, k: int
) -> np.ndarray:
    """Core among ``members``: the part with most battles inside, then most models, then
    the lowest index; empty if no part has a battle inside."""
    member = np.zeros(k, dtype=bool)
    member[members] = True
    same = (labels[pi] == labels[pj]) & member[pi] & member[pj]
    n_lab = labels.max() + 1
    inside = np.bincount(labels[pi][same], weights=n[same], minlength=n_lab)
    size = np.bincount(labels[members], minlength=n_lab)
    first = np.full(n_lab, k, dtype=np.int64)
    np.minimum.at(first, labels[members], members)
    core = np.zeros(k, dtype=bool)
    ok = (size > 0) & (inside > 0)
    if ok.any():
        order = np.lexsort((first, -size, -inside))
        best = next(int(x) for x in order if ok[x])
        core[members[labels[members] == best]] = True
    return core


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


def bootstrap(
    fit: BTFit,
    *,
    rounds: int = 1000,
    seed: int | None = 0,
    gtol: float = 1e-8,
    draws: np.ndarray | None = None,
    keep_samples: bool = True,
) -> IntervalResult:
    """Percentile bootstrap intervals, ``rounds`` multinomial redraws (see module docstring)."""
    prob = fit.problem
    k_all = len(fit.models)
    if draws is not None:
        rounds = int(np.asarray(draws).shape[0])
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    samples = np.full((rounds, k_all), np.nan)
    top_samples = np.full(rounds, np.nan) if prob.has_gamma else None
    diag = {
        "chord_iterations": 0,  # most chord steps any chunk of rounds needed
        "newton_rounds": 0,  # rounds finished with Newton after the chord stalled
        "other_core_rounds": 0,  # rounds whose Ford core was smaller than the full data's
        "unconverged_rounds": 0,  # rounds left above gtol (none expected)
        "max_grad_norm": 0.0,
    }
    if prob.k > 0:
        _run_rounds(fit, rounds, seed, gtol, draws, samples, top_samples, diag)
    lower, upper = np.percentile(samples, [2.5, 97.5], axis=0)
    top = None
    if top_samples is not None and prob.k > 0:
        lo, hi, med = np.percentile(top_samples, [2.5, 97.5, 50.0])
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
    )


def _run_rounds(
    fit: BTFit,
    rounds: int,
    seed: int | None,
    gtol: float,
    draws: np.ndarray | None,
    samples: np.ndarray,
    top_samples: np.ndarray | None,
    diag: dict,
) -> None:
    prob = fit.problem
    theta_hat = fit.theta[:, None]
    n_full, _ = prob.full_stats()
    inv_h = np.linalg.inv(prob.augment(prob.hessian(theta_hat, n_full)[0]))
    anchor_local, centre = fit.round_normalisation()
    rng = np.random.default_rng(seed)
    sampler = MultinomialSampler(prob.cat_count) if draws is None else None
    may_vanish = (
        sampler.can_be_zero() if sampler is not None else np.ones(prob.n_categories, dtype=bool)
    )
    check = _CoreCheck(prob, may_vanish)
    step = min(256, max(32, (1 << 20) // max(prob.n_pairs, 1)))
    for start in range(0, rounds, step):
        rc = min(step, rounds - start)
        if sampler is not None:
            x = np.ascontiguousarray(sampler.draw(rc, rng).T, dtype=float)
        else:
            x = _rows_to_categories(prob, np.asarray(draws)[start : start + rc])
        n, s = prob.pair_stats(x)
        theta = np.repeat(theta_hat, rc, axis=1)
        cores = check.cores(prob, x, n)
        same = np.array(
            [c is None or np.array_equal(c, prob.core_local) for c in cores], dtype=bool
        )
        std = np.flatnonzero(same)
        if len(std):
            res = prob.chord(theta[:, std], n[:, std], s[:, std], inv_h, gtol=gtol)
            diag["chord_iterations"] = max(diag["chord_iterations"], res.iterations)
            th = res.theta
            bad = np.flatnonzero(~res.converged)
            if len(bad):
                diag["newton_rounds"] += len(bad)
                nb = prob.newton(th[:, bad], n[:, std[bad]], s[:, std[bad]], gtol=gtol)
                th[:, bad] = nb.theta
                res.grad_norm[bad] = nb.grad_norm
            theta[:, std] = th
            diag["max_grad_norm"] = max(diag["max_grad_norm"], float(res.grad_norm.max()))
            diag["unconverged_rounds"] += int(np.sum(res.grad_norm > gtol))
        groups: dict[bytes, list[int]] = {}
        for r in np.flatnonzero(~same):
            groups.setdefault(np.packbits(cores[r]).tobytes(), []).append(int(r))
        for members in groups.values():
            idx = np.array(members)
            variant = prob.with_core(cores[idx[0]])
            nb = variant.newton(theta[:, idx], n[:, idx], s[:, idx], gtol=gtol)
            theta[:, idx] = nb.theta
            diag["other_core_rounds"] += len(idx)
            diag["max_grad_norm"] = max(diag["max_grad_norm"], float(nb.grad_norm.max()))
            diag["unconverged_rounds"] += int(np.sum(~nb.converged))
        ratings = normalise(theta[: prob.k], anchor_local=anchor_local, value=centre)
        samples[start : start + rc][:, prob.fitted] = ratings.T
        if top_samples is not None:
            top_samples[start : start + rc] = expit(theta[prob.k])
