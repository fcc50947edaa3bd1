"""Controlled ratings: a contextual Bradley-Terry fit with covariates, ridge and intervals.

Computes, from :class:`~analysis.contextual_data.ContextCounts`, ratings "controlled for"
position, length and latency (LMArena's "style control", extended to what a code completion
has): P(top wins) = sigma(theta_top - theta_bottom + x . beta), a tie half a win, x the
battle's covariates (``contextual_data.style_features``), beta one coefficient per covariate
with a ridge penalty 0.5 * ridge * |beta|^2 (in battles: ``ridge=1`` weighs like one battle,
negligible on real data but keeps beta finite if a covariate separates the outcomes). The
ratings are what the board would show if every battle had the reference conditions (both
completions equally long and fast, shown in a random slot): rating differences net of the
covariates' effects.

Scale, reference and anchor follow ``bradley_terry`` (the shown core models hold the mean);
models outside the Ford core get one virtual tie against the average core model, as there,
and no interval here. Solver: damped Newton on the exact Hessian, the rating and covariate
blocks assembled from one sparse design matrix over the (binned, merged) rows, so a fit costs
a few sparse products over the rows, not over the battles.

Intervals: sandwich, iid or user-clustered (leave-one-user-out for the heaviest users, as in
``clustered``), for the ratings (points) and the coefficients (log-odds; ``coefficients()``
also gives them in points). Held-out likelihood (``cross_validated_loglik``: each row's
battles split into folds at random, fit on the others, mean log-likelihood per held-out
battle) decides which covariates, e.g. context interactions, earn their place
(``contextual_selection``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix, hstack
from scipy.special import expit, log_expit, ndtri

from analysis.bradley_terry import mean_weights, resolve_anchor, resolve_reference
from analysis.comparison_graph import STATUS_OK, analyse_graph
from analysis.contextual_data import ContextCounts
from analysis.grouping import OUTCOME_A, OUTCOME_B, GroupedCounts
from analysis.ranks import rank_ub
from analysis.scale import CENTRE, SCALE

__all__ = ["ContextualFit", "fit_contextual"]

_EXACT_USERS = 256  # heaviest users whose own information is removed exactly (CR3)


@dataclass(frozen=True)
class ContextualFit:
    """Controlled ratings and covariate coefficients, each with an interval."""

    models: tuple[str, ...]
    rating: np.ndarray  # points, NaN where not rated
    lower: np.ndarray
    upper: np.ndarray
    sd: np.ndarray
    status: tuple[str, ...]
    feature_names: tuple[str, ...]
    coef: np.ndarray  # log-odds per unit of each covariate
    coef_se: np.ndarray
    coef_lower: np.ndarray
    coef_upper: np.ndarray
    theta: np.ndarray  # log-odds strengths per model (NaN where not rated), for predictions
    ridge: float
    clustered: bool
    clusters: int
    iterations: int
    converged: bool
    gradient_norm: float
    scale_label: str
    reference: tuple[str, ...]

    @property
    def rank(self) -> np.ndarray:
        """Rank (UB) of the controlled board (0 = no rank), see ``ranks``."""
        return rank_ub(self.lower, self.upper)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types only (NaN and infinite bounds -> None)."""

        def num(v: float) -> float | None:
            return float(v) if np.isfinite(v) else None

        return {
            "models": list(self.models),
            "rating": [num(v) for v in self.rating],
            "ci_lower": [num(v) for v in self.lower],
            "ci_upper": [num(v) for v in self.upper],
            "rating_sd": [num(v) for v in self.sd],
            "rank": [int(r) or None for r in self.rank],
            "status": list(self.status),
            "coefficients": self.coefficients(),
            "ridge": self.ridge,
            "clustered": self.clustered,
            "clusters": self.clusters,
            "converged": self.converged,
            "scale_label": self.scale_label,
            "reference": list(self.reference),
        }

    def coefficients(self) -> list[dict[str, Any]]:
        """One JSON-safe dict per covariate: log-odds and rating points, with the interval."""
        return [
            {
                "feature": name,
                "log_odds": float(self.coef[j]),
                "se": float(self.coef_se[j]),
                "lower": float(self.coef_lower[j]),
                "upper": float(self.coef_upper[j]),
                "points": float(SCALE * self.coef[j]),
            }
            for j, name in enumerate(self.feature_names)
        ]


def _pooled(cc: ContextCounts) -> GroupedCounts:
    return GroupedCounts(models=cc.models, a=cc.a, b=cc.b, outcome=cc.outcome, count=cc.count)


class _Design:
    """Cells of the fitted models: sparse design over cell means, scatter matrices, weights.

    The log-likelihood of a cell is taken to second order in the covariates' spread (see
    ``contextual_data``): w l(mu) - 1/2 (w / n) q(mu) beta^T S beta, q = sigma (1 - sigma).
    """

    def __init__(self, cc: ContextCounts, fitted: np.ndarray, core: np.ndarray) -> None:
        idx = np.flatnonzero(fitted)
        k, f = len(idx), cc.features.shape[1]
        local = np.full(cc.n_models, -1)
        local[idx] = np.arange(k)
        keep = fitted[cc.a] & fitted[cc.b]
        la, lb = local[cc.a[keep]], local[cc.b[keep]]
        r = len(la)
        rows = np.r_[np.arange(r), np.arange(r)]
        rating_part = csr_matrix((np.r_[np.ones(r), -np.ones(r)], (rows, np.r_[la, lb])), (r, k))
        self.x = hstack([rating_part, csr_matrix(cc.features[keep])], format="csr")
        self.la, self.lb, self.xf = la, lb, cc.features[keep]
        out = cc.outcome[keep]
        self.y = np.select([out == OUTCOME_A, out == OUTCOME_B], [1.0, 0.0], 0.5)
        self.count = cc.count[keep].astype(float)
        w = self.count if cc.weight is None else cc.weight[keep].astype(float)
        self.w = w * (self.count.sum() / w.sum()) if w.sum() > 0 else w
        self.mean_w = self.w / np.maximum(self.count, 1.0)
        self.s = np.zeros((r, f, f)) if cc.scatter is None else cc.scatter[keep]
        self.user = None if cc.user is None else cc.user[keep]
        self.k, self.d = k, k + f
        core_l = core[idx]
        omega = core_l / core_l.sum() if core_l.any() else np.full(k, 1.0 / max(k, 1))
        outside = np.flatnonzero(~core_l)
        self.pen = np.zeros((len(outside), self.d))
        self.pen[:, :k] = -omega
        self.pen[np.arange(len(outside)), outside] += 1.0
        self.null = np.r_[np.ones(k), np.zeros(f)]

    def _terms(
        self, beta: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        k = self.k
        mu = beta[self.la] - beta[self.lb] + self.xf @ beta[k:]
        sig = expit(mu)
        r, f = self.s.shape[0], self.d - k
        sb = (self.s.reshape(r * f, f) @ beta[k:]).reshape(r, f)  # S beta per cell
        return mu, sig, sig * (1.0 - sig), sb, sb @ beta[self.k :]

    def objective(self, beta: np.ndarray, ridge: float) -> float:
        mu, _, q, _, quad = self._terms(beta)
        ll = (self.w * (self.y * log_expit(mu) + (1 - self.y) * log_expit(-mu))).sum()
        ll -= 0.5 * (self.mean_w * q * quad).sum()
        lp = self.pen @ beta
        ll += (0.5 * (log_expit(lp) + log_expit(-lp))).sum()
        return float(ll - 0.5 * ridge * (beta[self.k :] ** 2).sum())

    def row_scores(self, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per cell: the coefficient of its design row, and the extra covariate-block term."""
        _, sig, q, sb, quad = self._terms(beta)
        r = self.w * (self.y - sig) - 0.5 * self.mean_w * q * (1 - 2 * sig) * quad
        return r, -(self.mean_w * q)[:, None] * sb

    def cell_terms(self, beta: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per cell: design-row coefficient of the score, covariate-block score term,
        curvature, cross-curvature coefficient, (w / n) q, and S beta."""
        _, sig, q, sb, quad = self._terms(beta)
        r, extra = self.row_scores(beta)
        curv = self.w * q + 0.5 * self.mean_w * q * (1 - 6 * q) * quad
        return r, extra, curv, self.mean_w * q * (1 - 2 * sig), self.mean_w * q, sb

    def grad_hess(
        self,
        beta: np.ndarray,
        ridge: float,
        rows: np.ndarray | None = None,
        terms: tuple[np.ndarray, ...] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and negative Hessian; over ``rows`` only (no penalties) if given."""
        r, extra, curv, cross, mwq, sb = self.cell_terms(beta) if terms is None else terms
        la, lb, xf, s = self.la, self.lb, self.xf, self.s
        if rows is not None:
            la, lb, xf, s, r, extra = la[rows], lb[rows], xf[rows], s[rows], r[rows], extra[rows]
            curv, cross, mwq, sb = curv[rows], cross[rows], mwq[rows], sb[rows]
        k = self.k
        g = np.concatenate([_diff_sum(la, lb, r, k), xf.T @ r + extra.sum(axis=0)])
        h = self._quadratic(la, lb, xf, curv, cross, sb, mwq, s)
        if rows is None:
            pp = expit(self.pen @ beta)
            g += self.pen.T @ (0.5 - pp)
            h += self.pen.T @ (self.pen * (pp * (1 - pp))[:, None])
            g[k:] -= ridge * beta[k:]
            h[k:, k:] += ridge * np.eye(self.d - k)
        return g, h

    def _quadratic(
        self,
        la: np.ndarray,
        lb: np.ndarray,
        xf: np.ndarray,
        curv: np.ndarray,
        cross: np.ndarray,
        sb: np.ndarray,
        mwq: np.ndarray,
        s: np.ndarray,
    ) -> np.ndarray:
        """sum curv x x^T + (x v^T + v x^T) cross + mwq S over cells (x the design row, v the
        covariate part S beta), assembled with bincounts instead of a sparse product."""
        k, d = self.k, self.d
        h = np.zeros((d, d))
        block = (
            np.bincount(la * k + la, curv, k * k)
            + np.bincount(lb * k + lb, curv, k * k)
            - np.bincount(la * k + lb, curv, k * k)
            - np.bincount(lb * k + la, curv, k * k)
        )
        h[:k, :k] = block.reshape(k, k)
        t = curv[:, None] * xf + cross[:, None] * sb
        for j in range(d - k):
            h[:k, k + j] = _diff_sum(la, lb, t[:, j], k)
        h[k:, :k] = h[:k, k:].T
        m = (xf * cross[:, None]).T @ sb
        h[k:, k:] = (xf * curv[:, None]).T @ xf + m + m.T + np.tensordot(mwq, s, axes=(0, 0))
        return h

    def iid_meat(self, beta: np.ndarray) -> np.ndarray:
        """Sum over battles of score outer products (cell covariates spread included)."""
        _, sig, _, _, _ = self._terms(beta)
        v = self.mean_w**2 * (self.y - sig) ** 2
        zero = np.zeros_like(self.xf)
        meat = self._quadratic(
            self.la, self.lb, self.xf, v * self.count, np.zeros(len(v)), zero, v, self.s
        )
        r, extra = self.row_scores(beta)
        score = np.concatenate(
            [_diff_sum(self.la, self.lb, r, self.k), self.xf.T @ r + extra.sum(axis=0)]
        )
        return np.asarray(meat - np.outer(score, score) / max(self.count.sum(), 1.0))

    def augment(self, h: np.ndarray) -> np.ndarray:
        scale = np.trace(h) / max(self.d, 1) + 1e-300
        return np.asarray(h + (scale / max(self.k, 1)) * np.outer(self.null, self.null))


def _diff_sum(la: np.ndarray, lb: np.ndarray, v: np.ndarray, k: int) -> np.ndarray:
    """sum over cells of v (e_a - e_b): the rating part of X^T v."""
    return np.asarray(np.bincount(la, v, k) - np.bincount(lb, v, k))


def _solve(
    design: _Design, ridge: float, gtol: float, max_iter: int
) -> tuple[np.ndarray, int, float]:
    beta = np.zeros(design.d)
    norm_n = max(design.count.sum(), 1.0)
    it, gnorm = 0, np.inf
    for it in range(1, max_iter + 1):
        g, h = design.grad_hess(beta, ridge)
        gnorm = float(np.linalg.norm(g) / norm_n)
        if gnorm <= gtol:
            return beta, it - 1, gnorm
        step = np.linalg.solve(design.augment(h), g)
        if g @ step <= 0:  # not an ascent direction (indefinite far from the optimum)
            step = g / (np.trace(h) / design.d + 1.0)
        f0, t = design.objective(beta, ridge), 1.0
        while t > 1e-10 and design.objective(beta + t * step, ridge) < f0 + 1e-4 * t * (g @ step):
            t *= 0.5
        beta = beta + t * step
    g, _ = design.grad_hess(beta, ridge)
    return beta, it, float(np.linalg.norm(g) / norm_n)


def _covariance(
    design: _Design, beta: np.ndarray, h: np.ndarray, clustered: bool
) -> tuple[np.ndarray, int]:
    if not clustered:
        hinv = np.linalg.inv(h)
        return hinv @ design.iid_meat(beta) @ hinv, 0
    if design.user is None:
        raise ValueError("clustered errors need the rows' users")
    users, row_user = np.unique(design.user, return_inverse=True)
    n_users, n_rows = len(users), len(design.y)
    r, extra = design.row_scores(beta)
    to_user = csr_matrix((np.ones(n_rows), (row_user, np.arange(n_rows))), (n_users, n_rows))
    g = np.asarray((to_user @ design.x.multiply(r[:, None])).todense())
    g[:, design.k :] += to_user @ extra
    d = np.linalg.solve(h, g.T).T
    share = np.bincount(row_user, weights=design.count, minlength=n_users)
    order = np.argsort(row_user, kind="stable")
    starts = np.searchsorted(row_user[order], np.arange(n_users + 1))
    terms = design.cell_terms(beta)
    for u in np.argsort(-share, kind="stable")[: min(_EXACT_USERS, n_users)]:
        rows = order[starts[u] : starts[u + 1]]
        _, h_u = design.grad_hess(beta, 0.0, rows=rows, terms=terms)
        d[u] = np.linalg.solve(h - h_u, g[u])
    d -= d.mean(axis=0)
    return (d.T @ d) * ((n_users - 1.0) / max(n_users, 1)), n_users


def _scale_label(
    reference: np.ndarray, shown: bool, anchor: str | None, applied: bool, value: float
) -> str:
    if applied and anchor is not None:
        return f"{anchor} held at {value:g}"
    which = "shown" if shown else "rated"
    label = f"mean of the {int(reference.sum())} {which} models held at {value:g}"
    return label + (f" ({anchor} is not rated here)" if anchor is not None else "")


def fit_contextual(
    cc: ContextCounts,
    *,
    ridge: float = 1.0,
    anchor: str | None = None,
    anchor_value: float = CENTRE,
    shown: Sequence[str] | np.ndarray | None = None,
    clustered: bool | None = None,
    level: float = 0.95,
    gtol: float = 1e-8,
    max_iter: int = 100,
) -> ContextualFit:
    """Controlled ratings and coefficients (see the module docstring). ``clustered=None``
    means clustered whenever the counts carry users.

    Long only because it fills the fit's fields, in one place.
    """
    if ridge < 0:
        raise ValueError("ridge must be non-negative")
    clustered = cc.user is not None if clustered is None else clustered
    if clustered and cc.user is None:
        raise ValueError("clustered intervals need counts with a user column")
    pooled = _pooled(cc)
    structure = analyse_graph(pooled)
    design = _Design(cc, structure.main, structure.core)
    k, f = design.k, len(cc.feature_names)
    beta, iters, gnorm = _solve(design, ridge, gtol, max_iter) if k else (np.zeros(f), 0, 0.0)
    applied, anchor_local = resolve_anchor(pooled, structure, anchor)
    reference = resolve_reference(pooled, structure, shown)
    fitted = np.flatnonzero(structure.main)
    t_map = np.eye(k) - mean_weights(reference, fitted, anchor_local)[None, :]
    z = float(ndtri(0.5 + level / 2.0))  # normal quantile (norm.ppf checks more, slower)
    n_all = cc.n_models
    rating, sd, theta = (np.full(n_all, np.nan) for _ in range(3))
    lower, upper = np.full(n_all, np.nan), np.full(n_all, np.nan)
    coef_se, clusters = np.full(f, np.nan), 0
    if k:
        _, h = design.grad_hess(beta, ridge)
        cov, clusters = _covariance(design, beta, design.augment(h), clustered)
        cov = 0.5 * (cov + cov.T)
        theta[fitted] = beta[:k]
        rating[fitted] = anchor_value + SCALE * (t_map @ beta[:k])
        sd[fitted] = SCALE * np.sqrt(np.maximum(np.diag(t_map @ cov[:k, :k] @ t_map.T), 0.0))
        lower, upper = rating - z * sd, rating + z * sd
        coef_se = np.sqrt(np.maximum(np.diag(cov)[k:], 0.0))
        not_ok = np.array([s != STATUS_OK for s in structure.status]) & structure.main
        lower[not_ok], upper[not_ok] = -np.inf, np.inf
    coef = beta[k:] if k else np.zeros(f)
    return ContextualFit(
        models=cc.models,
        rating=rating,
        lower=lower,
        upper=upper,
        sd=sd,
        status=structure.status,
        feature_names=cc.feature_names,
        coef=coef,
        coef_se=coef_se,
        coef_lower=coef - z * coef_se,
        coef_upper=coef + z * coef_se,
        theta=theta,
        ridge=float(ridge),
        clustered=bool(clustered),
        clusters=clusters,
        iterations=iters,
        converged=bool(gnorm <= gtol),
        gradient_norm=gnorm,
        scale_label=_scale_label(reference, shown is not None, anchor, applied, anchor_value),
        reference=tuple(m for m, r in zip(cc.models, reference, strict=True) if r),
    )
