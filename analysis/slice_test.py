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

Longer than most modules, on purpose: much of it is this statement of the test. Validated by
simulation in ``tests/analysis/test_slice_test.py`` (false-positive rate at
the 5% level and power on a known shift). No Django.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy import stats

from analysis.pair_counts import PairCounts, PairFit, connected_parts, fit_pairs, log_likelihood
from analysis.scale import SCALE

__all__ = [
    "PairCounts",
    "PairFit",
    "SliceTestResult",
    "SliceValueResult",
    "fit_pairs",
    "slice_test",
]


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
    n_comp, _ = connected_parts(n)
    params = idx.size - n_comp
    return x2, max(0, int(met.sum()) - params)


def _ratings(fit: PairFit, names: Sequence[str]) -> dict[str, float]:
    """A fit's finite strengths in rating points, by model."""
    return {m: float(fit.rating[i]) for i, m in enumerate(names) if math.isfinite(fit.theta[i])}


def _pooled_counts(slices: Mapping[str, PairCounts]) -> tuple[PairCounts, dict[str, int]]:
    """Every value's counts added up over the union of their models, and each model's index."""
    names = sorted({m for counts in slices.values() for m in counts.models})
    position = {m: i for i, m in enumerate(names)}
    k = len(names)
    total_n = np.zeros((k, k))
    total_s = np.zeros((k, k))
    for counts in slices.values():
        index = np.array([position[m] for m in counts.models], dtype=np.int64)
        total_n[np.ix_(index, index)] += counts.battles
        total_s[np.ix_(index, index)] += counts.score
    return PairCounts(models=tuple(names), battles=total_n, score=total_s), position


def _kendall(
    rated: list[tuple[str, float]], reference: Mapping[str, float]
) -> tuple[float, float, int]:
    """Kendall's tau-b of a value's ratings against the reference, its p-value, the models."""
    common = [(r, reference[m]) for m, r in rated if m in reference and math.isfinite(reference[m])]
    tau = tau_p = math.nan
    if len(common) >= 2:
        x, y = zip(*common, strict=True)
        if np.ptp(x) > 0 and np.ptp(y) > 0:
            test = stats.kendalltau(x, y)
            tau, tau_p = float(test.statistic), float(test.pvalue)
    return tau, tau_p, len(common)


@dataclass(frozen=True)
class _ValueFit:
    """One value's separate fit, its result (noise_rms not yet known) and its sums."""

    fit: PairFit
    result: SliceValueResult
    x2: float  # Pearson X^2 of the separate fit
    residual_df: int
    d2: float  # battle-weighted squared shift, rating points
    var: float  # battle-weighted information-based variance of the shift
    weight: float


def _value_fit(
    value: str,
    counts: PairCounts,
    pooled: PairFit,
    position: Mapping[str, int],
    reference: Mapping[str, float],
) -> _ValueFit:
    fit = fit_pairs(counts)
    x2, rdf = _pearson(fit, counts)
    index = np.array([position[m] for m in counts.models], dtype=np.int64)
    active = counts.votes > 0
    ll0 = log_likelihood(np.where(active, pooled.theta[index], 0.0), counts.score)
    d2, var, w = _shift(fit, pooled, index, counts.votes)
    rated = [
        (m, float(fit.rating[i]))
        for i, m in enumerate(counts.models)
        if math.isfinite(fit.theta[i]) and not fit.boundary[i]
    ]
    tau, tau_p, tau_models = _kendall(rated, reference)
    result = SliceValueResult(
        value=str(value),
        battles=counts.total,
        models=int(active.sum()),
        n_params=fit.n_params,
        contribution=max(0.0, 2.0 * (fit.loglik - ll0)),
        kendall_tau=tau,
        kendall_p=tau_p,
        tau_models=tau_models,
        rms_shift=math.sqrt(d2 / w) if w > 0 else math.nan,
        noise_rms=math.nan,  # set once the dispersion is known
        boundary=int(fit.boundary.sum()),
        ratings=dict(rated),
    )
    return _ValueFit(fit, result, x2, rdf, d2, var, w)


def _dispersion_and_p(
    statistic: float,
    df: int,
    x2: float,
    residual_df: int,
    dispersion: float | None,
    warnings: list[str],
) -> tuple[float, float]:
    """The dispersion (estimated unless given) and the test's p-value (see module doc)."""
    estimated = dispersion is None and residual_df > 0 and x2 > 0
    if dispersion is not None:
        phi = float(dispersion)
    elif estimated:
        phi = x2 / residual_df
    else:
        phi = 1.0
        warnings.append(
            "No residual degrees of freedom to estimate the dispersion: the plain "
            "binomial likelihood-ratio test is used."
        )
    # No free parameter to test (e.g. a single value): no p-value rather than a fake one.
    if df <= 0:
        return phi, math.nan
    if estimated:
        return phi, float(stats.f.sf(statistic / df / phi, df, residual_df))
    return phi, float(stats.chi2.sf(statistic / phi, df))


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
    Long only because it fills the result's fields, in one place.
    """
    if dispersion is not None and not dispersion > 0:
        raise ValueError("dispersion must be positive")
    pooled_counts, position = _pooled_counts(slices)
    pooled = fit_pairs(pooled_counts)
    pooled_ratings = _ratings(pooled, pooled_counts.models)
    ref = dict(reference) if reference is not None else pooled_ratings
    fits = [_value_fit(v, counts, pooled, position, ref) for v, counts in slices.items()]
    warnings = [
        f"The fit for {f.result.value!r} did not fully converge."
        for f in fits
        if not f.fit.converged
    ]
    ll_separate = sum(f.fit.loglik for f in fits)
    # The pooled fit maximises the summed log-likelihood, so LR >= 0 up to rounding.
    statistic = max(0.0, 2.0 * (ll_separate - pooled.loglik))
    df = sum(f.fit.n_params for f in fits) - pooled.n_params
    if len(slices) < 2:
        warnings.append("Fewer than two slice values have a board: nothing to compare.")
    residual_df = sum(f.residual_df for f in fits)
    phi, p_value = _dispersion_and_p(
        statistic, df, sum(f.x2 for f in fits), residual_df, dispersion, warnings
    )
    # Quasi-likelihood: the estimates' sampling variance is phi times the inverse information.
    values = [
        replace(f.result, noise_rms=math.sqrt(phi * f.var / f.weight) if f.weight > 0 else math.nan)
        for f in fits
    ]
    boundary_total = sum(f.result.boundary for f in fits)
    if boundary_total:
        warnings.append(
            f"{boundary_total} model fit(s) won or lost every battle within a value: their "
            "ratings there are unbounded and the chi-squared approximation is doubtful."
        )
    sum_d2 = sum(f.d2 for f in fits)
    sum_var = sum(f.var for f in fits)
    sum_w = sum(f.weight for f in fits)
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
        pooled_ratings=pooled_ratings,
        warnings=tuple(warnings),
    )
