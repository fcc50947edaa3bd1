"""Does a slice dimension change the ranking? A likelihood-ratio test on pairwise counts.

Question: for one slice dimension (task type, programming language, context length, ...)
with values v = 1..V, is one Bradley-Terry model enough for every value, or does each
value need its own ratings?

* H0 (pooled): one strength vector theta for all values: P(i beats j) = sigma(theta_i -
  theta_j) whatever the slice value.
* H1 (separate): one theta_v per value, fitted on that value's battles alone.

Both are fitted by maximum likelihood on the same battles: the union of the slice
values' pairwise counts (``PairCounts``: battles n_ij and points s_ij = wins + ties / 2
of i against j, position ignored). The statistic is

    LR = 2 * (sum_v max log L_v(theta_v) - max sum_v log L_v(theta))

and, under H0, LR is approximately chi-squared with

    df = sum_v (free parameters of value v) - (free parameters of the pooled fit),

where a fit's free parameters are, per connected part of its comparison graph, the number
of models in that part minus one (ratings are only defined up to a constant per part).
``contribution`` of a value is its share
2 * (log L_v(theta_v) - log L_v(theta_pooled)); the shares add up to LR.

Dispersion. The counts ignore which completion was shown on top, and ties count half:
both make a battle's score vary *less* than the binomial p(1 - p) the likelihood assumes
(with Copilot Arena's 82% top-slot acceptance, about 0.6 times as much), while votes
clustered by user or a Bradley-Terry misfit make it vary *more*. So, as in a quasi-binomial
GLM, the dispersion phi is estimated from the per-value fits' Pearson residuals,
phi = X^2 / (residual df) over every pair of models that met within a value, and the test is
the F test F = (LR / df) / phi on (df, residual df) degrees of freedom (``p_value``);
``scaled_statistic`` = LR / phi. Pass ``dispersion=1.0`` for the plain chi-squared test.

Effect size, because with enough battles any tiny shift is "significant": ``rms_shift``
is the battle-weighted root mean square, in rating points, of how far each model's
per-value rating moves from its pooled rating (both centred within the value's connected
part); ``noise_rms`` is what sampling noise alone would give (from the observed Fisher
information times phi: Var(theta_v - theta_pooled) ~ Var(theta_v) - Var(theta_pooled),
the usual variance of a difference between an efficient estimator and a restricted one).
A shift well above the noise is real movement; near it, the values agree.

``kendall_tau`` per value compares the value's separate-fit ranking with a reference
(the overall board's ratings when given, else the pooled fit) over the models both rate
(scipy's tau-b, with its p-value).

Position. The stored matrices do not say which completion was on top, so the fit is the
neutral one. Positions are coin flips, so each battle is still Bernoulli and the test keeps
its level, but a strong top-slot advantage (82% in Copilot Arena) attenuates the rating
differences the neutral fit sees and costs power (measured: 0.68 instead of 0.995 for a
35-point shift of three models at 10,000 battles per value). Per-position counts (battles
and top wins per ordered pair) would allow a position-aware test; the snapshot does not
store them.

Input from a stored leaderboard: ``PairCounts.from_matrices`` rebuilds n and s from a
board's battle-count and win-fraction matrices (win fraction = (wins + ties/2) / battles),
so the test needs nothing beyond what a snapshot already stores.

Caveats, stated on the pages too:

* Battles are treated as exchangeable within a pair and value: the dispersion absorbs
  extra variation that is spread evenly, not, e.g., one user's votes concentrated on one
  value.
* A model that wins or loses every battle within a value has an infinite rating there
  (``boundary`` count); the fit approaches the supremum of the likelihood with a
  vanishing ridge (1e-6), the statistic stays finite, but the chi-squared approximation is
  doubtful and a warning says so.

Validated by simulation in ``tests/analysis/test_slice_test.py`` (false-positive rate at
the 5% level and power on a known shift). No Django.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy import stats
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import log_expit

from analysis.scale import SCALE

__all__ = [
    "PairCounts",
    "PairFit",
    "SliceTestResult",
    "SliceValueResult",
    "fit_pairs",
    "slice_test",
]

RIDGE = 1e-6
"""Vanishing L2 penalty: keeps infinite MLEs finite without moving the likelihood visibly."""

MAX_STEP = 3.0
"""Largest Newton step in log-odds per iteration (divergent directions grow steadily)."""

BOUNDARY_INFORMATION = 1e-6
"""A model whose Fisher information per battle is below this sits at the boundary."""


@dataclass(frozen=True)
class PairCounts:
    """Battles between each pair of models, both positions together, and points won.

    ``battles[i, j]`` (symmetric, zero diagonal) and ``score[i, j]`` = wins of i over j +
    half the ties, so ``score + score.T == battles``.
    """

    models: tuple[str, ...]
    battles: np.ndarray
    score: np.ndarray

    def __post_init__(self) -> None:
        k = len(self.models)
        if len(set(self.models)) != k:
            raise ValueError("model names must be unique")
        n = np.asarray(self.battles, dtype=float)
        s = np.asarray(self.score, dtype=float)
        if n.shape != (k, k) or s.shape != (k, k):
            raise ValueError(f"matrices must be {k}x{k}, got {n.shape} and {s.shape}")
        if not (np.isfinite(n).all() and np.isfinite(s).all()):
            raise ValueError("counts must be finite")
        if (n < 0).any() or (s < -1e-9).any() or (s > n + 1e-9).any():
            raise ValueError("need 0 <= score <= battles")
        if not np.allclose(n, n.T):
            raise ValueError("battles must be symmetric")
        n = n.copy()
        np.fill_diagonal(n, 0.0)
        # Points of i and j over their battles add up to the battles; average out rounding.
        s = np.clip((s + (n - s.T)) / 2.0, 0.0, n)
        object.__setattr__(self, "battles", n)
        object.__setattr__(self, "score", s)

    @property
    def total(self) -> float:
        """Number of battles (each pair counted once)."""
        return float(np.triu(self.battles, 1).sum())

    @property
    def votes(self) -> np.ndarray:
        """Battles of each model."""
        return np.asarray(self.battles.sum(axis=1))

    @classmethod
    def from_matrices(
        cls,
        models: Sequence[str],
        battle_count: Sequence[Sequence[float | None]],
        win_fraction: Sequence[Sequence[float | None]],
    ) -> PairCounts:
        """From a stored board's battle-count and win-fraction matrices (None = NaN)."""
        n = np.array(
            [[0.0 if v is None else float(v) for v in row] for row in battle_count], dtype=float
        )
        w = np.array(
            [[np.nan if v is None else float(v) for v in row] for row in win_fraction],
            dtype=float,
        )
        s = np.where(n > 0, np.nan_to_num(w) * n, 0.0)
        return cls(models=tuple(models), battles=n, score=s)

    @classmethod
    def from_battles(
        cls,
        models: Sequence[str],
        first: Sequence[int] | np.ndarray,
        second: Sequence[int] | np.ndarray,
        points_first: Sequence[float] | np.ndarray,
    ) -> PairCounts:
        """From one row per battle: model indices and the first model's points (1, 0.5, 0)."""
        k = len(models)
        a = np.asarray(first, dtype=np.int64)
        b = np.asarray(second, dtype=np.int64)
        p = np.asarray(points_first, dtype=float)
        if (a == b).any():
            raise ValueError("a model cannot battle itself")
        n = np.zeros((k, k))
        s = np.zeros((k, k))
        np.add.at(n, (a, b), 1.0)
        np.add.at(n, (b, a), 1.0)
        np.add.at(s, (a, b), p)
        np.add.at(s, (b, a), 1.0 - p)
        return cls(models=tuple(models), battles=n, score=s)

    def restricted(self, models: Sequence[str]) -> PairCounts:
        """The same counts on a subset (or reordering) of the models."""
        index = [self.models.index(m) for m in models]
        return PairCounts(
            models=tuple(models),
            battles=self.battles[np.ix_(index, index)],
            score=self.score[np.ix_(index, index)],
        )


def _loglik(theta: np.ndarray, s: np.ndarray) -> float:
    """Sum over unordered pairs of s log p + (n - s) log (1 - p); each pair appears twice
    (so the battles n_ij enter through s_ji = n_ij - s_ij)."""
    d = theta[:, None] - theta[None, :]
    # Over ordered pairs, s_ij log sigma(d_ij) counts each pair's two outcomes once each.
    return float(np.sum(s * log_expit(d)))


def _components(n: np.ndarray) -> tuple[int, np.ndarray]:
    count, labels = connected_components(csr_matrix(n > 0), directed=False)
    return int(count), labels


@dataclass(frozen=True)
class PairFit:
    """A Bradley-Terry fit on pairwise counts (natural log-odds, centred per connected part).

    ``theta`` is NaN for models without battles. ``covariance`` is the inverse observed
    information of the centred strengths (pseudo-inverse; NaN rows for boundary models).
    """

    models: tuple[str, ...]
    theta: np.ndarray
    loglik: float
    n_params: int
    components: np.ndarray  # connected-part label per model (-1 = no battles)
    covariance: np.ndarray
    boundary: np.ndarray  # bool per model
    converged: bool
    iterations: int

    @property
    def rating(self) -> np.ndarray:
        """Strengths on the 400-point scale, mean zero per connected part."""
        return SCALE * self.theta


def fit_pairs(
    counts: PairCounts, *, ridge: float = RIDGE, tol: float = 1e-9, max_iter: int = 500
) -> PairFit:
    """Maximum-likelihood Bradley-Terry strengths from pairwise counts (damped Newton)."""
    k = len(counts.models)
    active = counts.votes > 0
    idx = np.flatnonzero(active)
    theta_full = np.full(k, np.nan)
    comp_full = np.full(k, -1, dtype=np.int64)
    cov_full = np.full((k, k), np.nan)
    boundary_full = np.zeros(k, dtype=bool)
    if idx.size == 0:
        return PairFit(counts.models, theta_full, 0.0, 0, comp_full, cov_full, boundary_full,
                       True, 0)  # fmt: skip
    n = counts.battles[np.ix_(idx, idx)]
    s = counts.score[np.ix_(idx, idx)]
    m = idx.size
    n_comp, labels = _components(n)
    rowsum_s = s.sum(axis=1)

    def objective(t: np.ndarray) -> float:
        return _loglik(t, s) - 0.5 * ridge * float(t @ t)

    theta = np.zeros(m)
    value = objective(theta)
    converged = False
    iterations = 0
    for iterations in range(1, max_iter + 1):  # noqa: B007 (reported below)
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        grad = rowsum_s - (n * p).sum(axis=1) - ridge * theta
        w = n * p * (1.0 - p)
        info = np.diag(w.sum(axis=1)) - w
        if np.max(np.abs(grad)) < tol * max(1.0, counts.total):
            converged = True
            break
        step = np.linalg.solve(info + ridge * np.eye(m), grad)
        biggest = np.max(np.abs(step))
        if biggest > MAX_STEP:
            step *= MAX_STEP / biggest
        # Backtracking: the objective is concave, so a halved step eventually improves it.
        for _ in range(40):
            candidate = theta + step
            new_value = objective(candidate)
            if new_value >= value - 1e-12 * abs(value):
                break
            step /= 2.0
        theta, value = candidate, new_value
    # Centre each connected part (the ridge already nearly does; make it exact).
    for c in range(n_comp):
        part = labels == c
        theta[part] -= theta[part].mean()
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    w = n * p * (1.0 - p)
    info = np.diag(w.sum(axis=1)) - w
    votes = n.sum(axis=1)
    boundary = info.diagonal() < BOUNDARY_INFORMATION * votes
    cov = np.linalg.pinv(info, hermitian=True)
    cov[boundary, :] = np.nan
    cov[:, boundary] = np.nan
    sizes = np.bincount(labels, minlength=n_comp)
    theta_full[idx] = theta
    comp_full[idx] = labels
    cov_full[np.ix_(idx, idx)] = cov
    boundary_full[idx] = boundary
    return PairFit(
        models=counts.models,
        theta=theta_full,
        loglik=_loglik(theta, s),
        n_params=int((sizes - 1).sum()),
        components=comp_full,
        covariance=cov_full,
        boundary=boundary_full,
        converged=converged,
        iterations=iterations,
    )


def _nan_to_none(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


@dataclass(frozen=True)
class SliceValueResult:
    """One value of the dimension: its fit against the pooled one."""

    value: str
    battles: float
    models: int
    n_params: int
    contribution: float
    """2 * (log L_v(separate) - log L_v(pooled)); the values' contributions sum to LR."""
    kendall_tau: float
    kendall_p: float
    tau_models: int
    rms_shift: float
    noise_rms: float
    boundary: int
    ratings: dict[str, float] = field(default_factory=dict)
    """Separate-fit strengths in rating points, mean zero per connected part."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "battles": round(self.battles, 3),
            "models": self.models,
            "n_params": self.n_params,
            "contribution": _nan_to_none(self.contribution),
            "kendall_tau": _nan_to_none(self.kendall_tau),
            "kendall_p": _nan_to_none(self.kendall_p),
            "tau_models": self.tau_models,
            "rms_shift": _nan_to_none(self.rms_shift),
            "noise_rms": _nan_to_none(self.noise_rms),
            "boundary": self.boundary,
            "ratings": {k: _nan_to_none(v) for k, v in self.ratings.items()},
        }


@dataclass(frozen=True)
class SliceTestResult:
    """Likelihood-ratio test of one pooled Bradley-Terry model against one per value."""

    statistic: float
    df: int
    p_value: float
    dispersion: float
    residual_df: int
    battles: float
    models: int
    loglik_pooled: float
    loglik_separate: float
    rms_shift: float
    noise_rms: float
    boundary: int
    values: tuple[SliceValueResult, ...]
    pooled_ratings: dict[str, float] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def scaled_statistic(self) -> float:
        """LR / dispersion: approximately chi-squared on ``df`` under H0."""
        return self.statistic / self.dispersion if self.dispersion > 0 else math.nan

    def rejects(self, alpha: float = 0.05) -> bool:
        """True when the ranking differs between values at level ``alpha``."""
        return math.isfinite(self.p_value) and self.p_value < alpha

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": "likelihood ratio, pooled vs per-value Bradley-Terry, dispersion-scaled",
            "statistic": _nan_to_none(self.statistic),
            "df": self.df,
            "dispersion": _nan_to_none(self.dispersion),
            "residual_df": self.residual_df,
            "scaled_statistic": _nan_to_none(self.scaled_statistic),
            "p_value": _nan_to_none(self.p_value),
            "battles": round(self.battles, 3),
            "models": self.models,
            "loglik_pooled": _nan_to_none(self.loglik_pooled),
            "loglik_separate": _nan_to_none(self.loglik_separate),
            "rms_shift": _nan_to_none(self.rms_shift),
            "noise_rms": _nan_to_none(self.noise_rms),
            "boundary": self.boundary,
            "values": [v.to_dict() for v in self.values],
            "pooled_ratings": {k: _nan_to_none(v) for k, v in self.pooled_ratings.items()},
            "warnings": list(self.warnings),
        }


def _shift(
    separate: PairFit, pooled: PairFit, pooled_index: np.ndarray, votes: np.ndarray
) -> tuple[float, float, float]:
    """(sum w d^2, sum w var, sum w) over this value's non-boundary models, rating points."""
    sum_d2 = sum_var = sum_w = 0.0
    for c in np.unique(separate.components[separate.components >= 0]):
        part = np.flatnonzero((separate.components == c) & ~separate.boundary)
        if part.size < 2:
            continue
        pooled_part = pooled_index[part]
        if pooled.boundary[pooled_part].any():
            part = part[~pooled.boundary[pooled_part]]
            pooled_part = pooled_index[part]
            if part.size < 2:
                continue
        size = part.size
        centre = np.eye(size) - 1.0 / size
        t_sep = separate.theta[part]
        t_pool = pooled.theta[pooled_part]
        d = centre @ (t_sep - t_pool)
        # Covariances of the strengths centred over exactly these models.
        cov_sep = centre @ separate.covariance[np.ix_(part, part)] @ centre
        cov_pool = centre @ pooled.covariance[np.ix_(pooled_part, pooled_part)] @ centre
        var = np.clip(np.diag(cov_sep) - np.diag(cov_pool), 0.0, None)
        w = votes[part]
        sum_d2 += float(np.sum(w * d**2))
        sum_var += float(np.sum(w * var))
        sum_w += float(np.sum(w))
    return sum_d2 * SCALE**2, sum_var * SCALE**2, sum_w


def _pearson(fit: PairFit, counts: PairCounts) -> tuple[float, int]:
    """Pearson X^2 of a fit over the pairs that met (boundary models left out), residual df."""
    ok = np.isfinite(fit.theta) & ~fit.boundary
    idx = np.flatnonzero(ok)
    if idx.size < 2:
        return 0.0, 0
    theta = fit.theta[idx]
    n = counts.battles[np.ix_(idx, idx)]
    s = counts.score[np.ix_(idx, idx)]
    iu = np.triu_indices(idx.size, 1)
    met = n[iu] > 0
    n_pair, s_pair = n[iu][met], s[iu][met]
    p = 1.0 / (1.0 + np.exp(-(theta[iu[0]] - theta[iu[1]])[met]))
    x2 = float(np.sum((s_pair - n_pair * p) ** 2 / (n_pair * p * (1.0 - p))))
    n_comp, _ = _components(n)
    params = idx.size - n_comp
    return x2, max(0, int(met.sum()) - params)


def slice_test(
    slices: Mapping[str, PairCounts],
    *,
    reference: Mapping[str, float] | None = None,
    dispersion: float | None = None,
) -> SliceTestResult:
    """Test whether the values of one slice dimension need separate ratings.

    ``slices`` maps each value to its pairwise counts (models may differ between values).
    ``reference`` maps model -> rating for Kendall's tau (default: the pooled fit).
    ``dispersion``: None estimates it from the data (F test); a number fixes it (chi-squared
    test of LR / dispersion; 1.0 is the plain binomial likelihood-ratio test).
    """
    if dispersion is not None and not dispersion > 0:
        raise ValueError("dispersion must be positive")
    names = sorted({m for counts in slices.values() for m in counts.models})
    position = {m: i for i, m in enumerate(names)}
    k = len(names)
    total_n = np.zeros((k, k))
    total_s = np.zeros((k, k))
    for counts in slices.values():
        index = np.array([position[m] for m in counts.models], dtype=np.int64)
        total_n[np.ix_(index, index)] += counts.battles
        total_s[np.ix_(index, index)] += counts.score
    pooled_counts = PairCounts(models=tuple(names), battles=total_n, score=total_s)
    pooled = fit_pairs(pooled_counts)
    ref = dict(reference) if reference is not None else {
        m: float(pooled.rating[i]) for i, m in enumerate(names) if math.isfinite(pooled.theta[i])
    }  # fmt: skip

    warnings: list[str] = []
    values: list[SliceValueResult] = []
    ll_separate = 0.0
    params_separate = 0
    sum_d2 = sum_var = sum_w = 0.0
    boundary_total = 0
    x2_total, residual_df = 0.0, 0
    per_value: list[tuple[float, float]] = []  # (info-based variance sum, weight) per value
    for value, counts in slices.items():
        fit = fit_pairs(counts)
        x2, rdf = _pearson(fit, counts)
        x2_total += x2
        residual_df += rdf
        index = np.array([position[m] for m in counts.models], dtype=np.int64)
        theta0 = pooled.theta[index]
        active = counts.votes > 0
        ll0 = _loglik(np.where(active, theta0, 0.0), counts.score)
        contribution = max(0.0, 2.0 * (fit.loglik - ll0))
        ll_separate += fit.loglik
        params_separate += fit.n_params
        d2, var, w = _shift(fit, pooled, index, counts.votes)
        sum_d2, sum_var, sum_w = sum_d2 + d2, sum_var + var, sum_w + w
        per_value.append((var, w))
        boundary = int(fit.boundary.sum())
        boundary_total += boundary
        rated = [
            (m, float(fit.rating[i]))
            for i, m in enumerate(counts.models)
            if math.isfinite(fit.theta[i]) and not fit.boundary[i]
        ]
        common = [(r, ref[m]) for m, r in rated if m in ref and math.isfinite(ref[m])]
        tau = tau_p = math.nan
        if len(common) >= 2:
            x, y = zip(*common, strict=True)
            if np.ptp(x) > 0 and np.ptp(y) > 0:
                test = stats.kendalltau(x, y)
                tau, tau_p = float(test.statistic), float(test.pvalue)
        values.append(
            SliceValueResult(
                value=str(value),
                battles=counts.total,
                models=int(active.sum()),
                n_params=fit.n_params,
                contribution=contribution,
                kendall_tau=tau,
                kendall_p=tau_p,
                tau_models=len(common),
                rms_shift=math.sqrt(d2 / w) if w > 0 else math.nan,
                noise_rms=math.nan,  # set below, once the dispersion is known
                boundary=boundary,
                ratings=dict(rated),
            )
        )
        if not fit.converged:
            warnings.append(f"The fit for {value!r} did not fully converge.")

    # The pooled fit maximises the summed log-likelihood, so LR >= 0 up to rounding.
    statistic = max(0.0, 2.0 * (ll_separate - pooled.loglik))
    df = params_separate - pooled.n_params
    if len(slices) < 2:
        warnings.append("Fewer than two slice values have a board: nothing to compare.")
    if dispersion is None:
        if residual_df > 0 and x2_total > 0:
            phi = x2_total / residual_df
        else:
            phi = 1.0
            warnings.append(
                "No residual degrees of freedom to estimate the dispersion: the plain "
                "binomial likelihood-ratio test is used."
            )
    else:
        phi = float(dispersion)
    # No free parameter to test (e.g. a single value): no p-value rather than a fake one.
    if df <= 0:
        p_value = math.nan
    elif dispersion is None and residual_df > 0 and x2_total > 0:
        p_value = float(stats.f.sf(statistic / df / phi, df, residual_df))
    else:
        p_value = float(stats.chi2.sf(statistic / phi, df))
    # Quasi-likelihood: the estimates' sampling variance is phi times the inverse information.
    values = [
        replace(v, noise_rms=math.sqrt(phi * var / w) if w > 0 else math.nan)
        for v, (var, w) in zip(values, per_value, strict=True)
    ]
    if boundary_total:
        warnings.append(
            f"{boundary_total} model fit(s) won or lost every battle within a value: their "
            "ratings there are unbounded and the chi-squared approximation is doubtful."
        )
    return SliceTestResult(
        statistic=statistic,
        df=int(df),
        p_value=p_value,
        dispersion=phi,
        residual_df=int(residual_df),
        battles=pooled_counts.total,
        models=int((pooled_counts.votes > 0).sum()),
        loglik_pooled=pooled.loglik,
        loglik_separate=ll_separate,
        rms_shift=math.sqrt(sum_d2 / sum_w) if sum_w > 0 else math.nan,
        noise_rms=math.sqrt(phi * sum_var / sum_w) if sum_w > 0 else math.nan,
        boundary=boundary_total,
        values=tuple(values),
        pooled_ratings={
            m: float(pooled.rating[i])
            for i, m in enumerate(names)
            if math.isfinite(pooled.theta[i])
        },
        warnings=tuple(warnings),
    )
