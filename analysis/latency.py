"""Latency-aware choice of which two models battle, from logged completion latencies.

Both completions are shown together, so the developer waits for the *slower* of the two.
This module models each model's latency as log-normal, derives the latency of every pair,
and turns those pair latencies into a sampling distribution that favours fast pairs while
keeping every pair sampled often enough for the ratings of slow models not to starve.

Inputs are plain numbers: per-model lists of *successful* completion latencies in seconds.
Outputs are dataclasses and numpy arrays; nothing here knows about Django or HTTP.

Model
-----
``ln L_i ~ N(mu_i, sigma_i^2)``, independent across models.

Fit with a prior (``fit_lognormal``)
    Normal-inverse-gamma shrinkage toward a prior ``(mu0, sigma0)`` worth ``w``
    pseudo-observations (``kappa0 = nu0 = w``). With ``n`` log-latencies of mean ``m`` and
    sum of squared deviations ``S``::

        mu      = (w * mu0 + n * m) / (w + n)
        sigma^2 = (w * sigma0^2 + S + w * n / (w + n) * (m - mu0)^2) / (w + n)

    ``n = 0`` gives the prior itself, so a new model gets a finite latency and is sampled;
    ``n >> w`` gives the plain estimate. ``pooled_prior`` builds the prior from all models:
    ``mu0`` = mean of the per-model mean log-latencies (a new model is assumed typical),
    ``sigma0`` = pooled within-model standard deviation of log-latency.

Pair latency (``pair_latency_matrix``)
    ``E_ij = E[max(L_i, L_j)]``. Two methods, which agree to 1e-9 relative for
    ``sigma >= 0.05`` (tested; the fixed grid gets coarse for narrower fits):

    * ``"closed_form"`` (default): for independent log-normals, with
      ``s = sqrt(sigma_i^2 + sigma_j^2)``::

          E[max] = e^(mu_i + sigma_i^2/2) * Phi((mu_i - mu_j + sigma_i^2) / s)
                 + e^(mu_j + sigma_j^2/2) * Phi((mu_j - mu_i + sigma_j^2) / s)

      (``E[L_i 1{L_i > L_j}]`` is ``E[L_i]`` times the probability of ``ln L_i > ln L_j``
      under the exponentially tilted law ``ln L_i ~ N(mu_i + sigma_i^2, sigma_i^2)``.)
    * ``"quadrature"``: ``E[max] = integral_0^inf (1 - F_i(x) F_j(x)) dx``, integrated on the
      log-time axis ``x = e^u`` with a fixed composite Gauss-Legendre rule vectorised over
      all pairs; the part below the grid, where ``F_i F_j`` is 0 to machine precision, is
      added exactly (``e^lo``).

    The median (any quantile ``q``) of ``max(L_i, L_j)`` solves ``F_i(x) F_j(x) = q``; it is
    found by vectorised bisection in log-time inside the bracket
    ``[max_k(mu_k + sigma_k z_q), max_k(mu_k + sigma_k z_sqrt(q))]``, ``k in {i, j}``.

Pair distribution (``pair_distribution``)
    Over unordered pairs ``i < j`` (``P = K(K-1)/2`` of them, uniform share ``u = 1/P``)::

        p_ij = floor * u + (1 - floor) * softmax_ij(-C_ij / tau)

    ``C`` is the pair cost in seconds (normally ``E``; the median matrix works too), ``tau``
    is in seconds. Because the softmax part is non-negative, ``p_ij >= floor * u`` for every
    pair, exactly. ``tau -> inf`` gives uniform; ``tau -> 0`` puts ``1 - floor`` on the
    cheapest pair(s) (split evenly on ties) and ``floor * u`` on each of the others.
    The returned array is K x K with the probabilities in the strict upper triangle
    (zeros elsewhere) summing to 1. Top/bottom position is randomised after drawing
    (``sample_pair``), as the original arena did.

Experienced latency
    Under a pair distribution the wait is the mixture ``G(x) = sum_ij p_ij F_i(x) F_j(x)``;
    ``experienced_latency_quantiles`` inverts it (bisection in log-time, vectorised over the
    requested quantiles) and ``experienced_latency_mean`` is ``sum_ij p_ij E_ij``.
    ``choose_tau`` scans ``tau`` on a log grid, reports the trade-off curve (median, p90,
    mean wait, smallest pair share, smallest model share) and picks the *largest* ``tau``
    (closest to uniform) that meets a target, refined by bisection.

Caveat: timeouts and errors are not latencies; callers pass successful latencies only.
A model that often times out therefore looks faster than it is (right-censoring is not
modelled).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

__all__ = [
    "DEFAULT_PRIOR",
    "LogNormalFit",
    "LogNormalPrior",
    "PairLatency",
    "TauChoice",
    "TauPoint",
    "choose_tau",
    "experienced_latency_mean",
    "experienced_latency_quantiles",
    "fit_lognormal",
    "fit_models",
    "model_shares",
    "pair_distribution",
    "pair_latency_matrix",
    "pair_latency_quantile",
    "pooled_prior",
    "sample_pair",
]

# Bisection on a bracket of width <= ~10 log-units: 64 halvings reach float resolution.
_BISECT_STEPS = 64
# Lower edge of the quadrature grid, in standard deviations below the fastest median:
# Phi(-9) ~ 1e-19, so below it F_i F_j is exactly 0 in double precision.
_QUAD_Z = 9.0
_QUAD_PANELS = 96
_QUAD_NODES = 8


@dataclass(frozen=True)
class LogNormalFit:
    """``ln L ~ N(mu, sigma^2)`` (latency in seconds) fitted from ``n`` observations."""

    mu: float
    sigma: float
    n: int = 0

    @property
    def median(self) -> float:
        return math.exp(self.mu)

    @property
    def mean(self) -> float:
        return math.exp(self.mu + 0.5 * self.sigma**2)

    def quantile(self, q: float | np.ndarray) -> float | np.ndarray:
        out: float | np.ndarray = np.exp(self.mu + self.sigma * ndtri(q))
        return out

    def cdf(self, x: float | np.ndarray) -> float | np.ndarray:
        x = np.asarray(x, dtype=float)
        with np.errstate(divide="ignore"):
            out: np.ndarray = ndtr((np.log(x) - self.mu) / self.sigma)
        return out

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray:
        return rng.lognormal(self.mu, self.sigma, size)


@dataclass(frozen=True)
class LogNormalPrior:
    """Prior guess ``(mu, sigma)`` of ln-latency, worth ``weight`` pseudo-observations."""

    mu: float
    sigma: float
    weight: float = 5.0

    def __post_init__(self) -> None:
        if not (self.sigma > 0 and self.weight >= 0):
            raise ValueError("prior needs sigma > 0 and weight >= 0")


# Placeholder for a deployment with no latency data at all: 1 s median, sigma 0.5
# (roughly the spread of API latencies); any real data replaces it via pooled_prior().
DEFAULT_PRIOR = LogNormalPrior(mu=0.0, sigma=0.5, weight=5.0)


def _clean_logs(latencies: Sequence[float] | np.ndarray) -> np.ndarray:
    x = np.asarray(latencies, dtype=float).ravel()
    # Zero/negative/NaN latencies are logging glitches, not fast completions.
    x = x[np.isfinite(x) & (x > 0)]
    out: np.ndarray = np.log(x)
    return out


def fit_lognormal(
    latencies: Sequence[float] | np.ndarray, *, prior: LogNormalPrior | None = None
) -> LogNormalFit:
    """Fit ``ln L ~ N(mu, sigma^2)`` to successful latencies (seconds).

    Without a prior this is the usual estimate (mean and ``ddof=1`` standard deviation of
    the logs) and needs at least two positive values. With a prior the normal-inverse-gamma
    shrinkage in the module docstring is used, which is defined for any ``n >= 0``.
    Non-positive and non-finite values are dropped; ``n`` counts the values kept.
    """
    logs = _clean_logs(latencies)
    n = int(logs.size)
    if prior is None:
        if n < 2:
            raise ValueError("need at least two positive latencies without a prior")
        return LogNormalFit(float(logs.mean()), max(float(logs.std(ddof=1)), 1e-9), n)
    w = float(prior.weight)
    if n == 0:
        return LogNormalFit(prior.mu, prior.sigma, 0)
    m = float(logs.mean())
    ss = float(((logs - m) ** 2).sum())
    total = w + n
    mu = (w * prior.mu + n * m) / total
    var = (w * prior.sigma**2 + ss + (w * n / total) * (m - prior.mu) ** 2) / total
    return LogNormalFit(mu, max(math.sqrt(var), 1e-9), n)


def pooled_prior(
    latencies_by_model: Mapping[Any, Sequence[float]] | Sequence[Sequence[float]],
    *,
    weight: float = 5.0,
    fallback: LogNormalPrior = DEFAULT_PRIOR,
) -> LogNormalPrior:
    """Prior for one model from all models' latencies (see module docstring).

    Models with fewer than two latencies do not contribute; if none has two, ``fallback``
    (with the requested weight) is returned.
    """
    groups = (
        latencies_by_model.values()
        if isinstance(latencies_by_model, Mapping)
        else latencies_by_model
    )
    means: list[float] = []
    ss = 0.0
    dof = 0
    for lat in groups:
        logs = _clean_logs(lat)
        if logs.size < 2:
            continue
        m = float(logs.mean())
        means.append(m)
        ss += float(((logs - m) ** 2).sum())
        dof += logs.size - 1
    if not means or ss <= 0:
        return LogNormalPrior(fallback.mu, fallback.sigma, weight)
    return LogNormalPrior(float(np.mean(means)), math.sqrt(ss / dof), weight)


def fit_models(
    latencies_by_model: Mapping[str, Sequence[float]],
    *,
    weight: float = 5.0,
    fallback: LogNormalPrior = DEFAULT_PRIOR,
) -> dict[str, LogNormalFit]:
    """Fit every model, each shrunk toward the pooled prior of all models."""
    prior = pooled_prior(latencies_by_model, weight=weight, fallback=fallback)
    return {name: fit_lognormal(lat, prior=prior) for name, lat in latencies_by_model.items()}


def _params(fits: Sequence[LogNormalFit]) -> tuple[np.ndarray, np.ndarray]:
    if len(fits) < 2:
        raise ValueError("need at least two models to form a pair")
    mu = np.array([f.mu for f in fits], dtype=float)
    sigma = np.array([f.sigma for f in fits], dtype=float)
    if not (np.all(np.isfinite(mu)) and np.all(sigma > 0)):
        raise ValueError("every fit needs a finite mu and sigma > 0")
    return mu, sigma


def _expected_max_closed_form(
    mu_i: np.ndarray, s_i: np.ndarray, mu_j: np.ndarray, s_j: np.ndarray
) -> np.ndarray:
    s = np.sqrt(s_i**2 + s_j**2)
    out: np.ndarray = np.exp(mu_i + 0.5 * s_i**2) * ndtr((mu_i - mu_j + s_i**2) / s) + np.exp(
        mu_j + 0.5 * s_j**2
    ) * ndtr((mu_j - mu_i + s_j**2) / s)
    return out


def _expected_max_quadrature(
    mu_i: np.ndarray, s_i: np.ndarray, mu_j: np.ndarray, s_j: np.ndarray
) -> np.ndarray:
    # Integrate (1 - F_i F_j) e^u du on a per-pair grid in u = ln x. Below `lo` both CDFs
    # are 0 to machine precision, so that piece is exactly e^lo; above `hi` the survival of
    # the size-biased law is < Phi(-9), negligible.
    lo = np.minimum(mu_i - _QUAD_Z * s_i, mu_j - _QUAD_Z * s_j)
    hi = np.maximum(mu_i + s_i * (_QUAD_Z + s_i), mu_j + s_j * (_QUAD_Z + s_j))
    x, w = np.polynomial.legendre.leggauss(_QUAD_NODES)
    edges = np.linspace(0.0, 1.0, _QUAD_PANELS + 1)
    half = 0.5 * (edges[1:] - edges[:-1])
    mid = 0.5 * (edges[1:] + edges[:-1])
    t = (mid[:, None] + half[:, None] * x[None, :]).ravel()  # nodes on [0, 1]
    wt = (half[:, None] * w[None, :]).ravel()
    width = (hi - lo)[:, None]
    u = lo[:, None] + width * t[None, :]
    f = ndtr((u - mu_i[:, None]) / s_i[:, None]) * ndtr((u - mu_j[:, None]) / s_j[:, None])
    integral = ((1.0 - f) * np.exp(u)) @ wt * (hi - lo)
    out: np.ndarray = integral + np.exp(lo)
    return out


def _max_quantile(
    mu_i: np.ndarray, s_i: np.ndarray, mu_j: np.ndarray, s_j: np.ndarray, q: float
) -> np.ndarray:
    if not 0.0 < q < 1.0:
        raise ValueError("quantile must be in (0, 1)")
    a = np.maximum(mu_i + s_i * ndtri(q), mu_j + s_j * ndtri(q))
    b = np.maximum(mu_i + s_i * ndtri(math.sqrt(q)), mu_j + s_j * ndtri(math.sqrt(q)))
    for _ in range(_BISECT_STEPS):
        m = 0.5 * (a + b)
        below = ndtr((m - mu_i) / s_i) * ndtr((m - mu_j) / s_j) < q
        a = np.where(below, m, a)
        b = np.where(below, b, m)
    out: np.ndarray = np.exp(0.5 * (a + b))
    return out


@dataclass(frozen=True)
class PairLatency:
    """K x K symmetric matrices (seconds): ``expected[i, j] = E[max(L_i, L_j)]`` and
    ``median[i, j]`` = median of ``max(L_i, L_j)``. The diagonal holds the values for two
    independent draws of the same model (not a battle; ignored by ``pair_distribution``)."""

    expected: np.ndarray
    median: np.ndarray


def pair_latency_matrix(
    fits: Sequence[LogNormalFit], *, method: str = "closed_form"
) -> PairLatency:
    """Expected and median wait for every pair of models (see module docstring).

    ``method`` is ``"closed_form"`` (exact, default) or ``"quadrature"`` (numerical
    integration of ``1 - F_i F_j``, kept as an independent check).
    """
    mu, sigma = _params(fits)
    k = mu.size
    ii, jj = np.triu_indices(k)
    args = (mu[ii], sigma[ii], mu[jj], sigma[jj])
    if method == "closed_form":
        e = _expected_max_closed_form(*args)
    elif method == "quadrature":
        e = _expected_max_quadrature(*args)
    else:
        raise ValueError(f"unknown method {method!r}")
    med = _max_quantile(*args, 0.5)
    expected = np.empty((k, k))
    median = np.empty((k, k))
    expected[ii, jj] = e
    expected[jj, ii] = e
    median[ii, jj] = med
    median[jj, ii] = med
    return PairLatency(expected=expected, median=median)


def pair_latency_quantile(fits: Sequence[LogNormalFit], q: float) -> np.ndarray:
    """K x K matrix of the ``q``-quantile of ``max(L_i, L_j)`` (e.g. ``q=0.9`` for p90)."""
    mu, sigma = _params(fits)
    k = mu.size
    ii, jj = np.triu_indices(k)
    vals = _max_quantile(mu[ii], sigma[ii], mu[jj], sigma[jj], q)
    out = np.empty((k, k))
    out[ii, jj] = vals
    out[jj, ii] = vals
    return out


def _pair_mask(k: int, active: Sequence[bool] | np.ndarray | None) -> np.ndarray:
    mask = np.triu(np.ones((k, k), dtype=bool), 1)
    if active is not None:
        act = np.asarray(active, dtype=bool)
        if act.shape != (k,):
            raise ValueError("active must have one flag per model")
        mask &= act[:, None] & act[None, :]
    if not mask.any():
        raise ValueError("need at least two active models")
    return mask


def pair_distribution(
    cost: np.ndarray,
    *,
    tau: float,
    floor: float,
    active: Sequence[bool] | np.ndarray | None = None,
    information: np.ndarray | None = None,
    information_weight: float = 0.0,
) -> np.ndarray:
    """Probability of each unordered pair ``i < j``: ``floor * u + (1 - floor) * softmax``.

    ``cost`` is a K x K pair-latency matrix in seconds (``PairLatency.expected`` normally),
    ``tau`` a temperature in seconds (``math.inf`` = uniform, ``0`` = cheapest pair),
    ``floor`` in [0, 1] the guaranteed fraction of the uniform share ``u`` for every pair.
    ``active`` (one bool per model) restricts the draw to pairs of active models, e.g. those
    carrying the requested tags; ``u`` is then uniform over active pairs.
    ``information`` (K x K, > 0 on the pairs drawn; ``analysis.active_sampling``) with
    ``information_weight`` lambda in [0, 1] replaces the softmax weights ``z`` by
    ``z^(1 - lambda) * information^lambda`` (normalised): lambda = 0 is latency alone.
    Returns a K x K array, non-zero only in the strict upper triangle, summing to 1.
    """
    c = np.asarray(cost, dtype=float)
    if c.ndim != 2 or c.shape[0] != c.shape[1]:
        raise ValueError("cost must be a square matrix")
    if not 0.0 <= floor <= 1.0:
        raise ValueError("floor must be in [0, 1]")
    if not tau >= 0:
        raise ValueError("tau must be >= 0")
    if not 0.0 <= information_weight <= 1.0:
        raise ValueError("information_weight must be in [0, 1]")
    mask = _pair_mask(c.shape[0], active)
    vals = c[mask]
    if not np.all(np.isfinite(vals)):
        raise ValueError("pair costs must be finite")
    npairs = vals.size
    uniform = np.full(npairs, 1.0 / npairs)
    if math.isinf(tau):
        log_z = np.zeros(npairs)
    elif tau == 0:
        log_z = np.where(vals == vals.min(), 0.0, -np.inf)
    else:
        log_z = -(vals - vals.min()) / tau
    if information is not None and information_weight > 0:
        info = np.asarray(information, dtype=float)[mask]
        if info.shape != vals.shape or not np.all(info > 0) or not np.all(np.isfinite(info)):
            raise ValueError("information must be finite and > 0 on every pair drawn")
        # Mixed in log space: neither part may under- or overflow the other.
        latency = (1.0 - information_weight) * log_z if information_weight < 1 else 0.0
        log_z = latency + information_weight * np.log(info)
    # Shift by the maximum so the largest weight is exp(0) = 1: no overflow or all-zero
    # underflow however small tau is.
    z = np.exp(log_z - log_z.max())
    soft = z / z.sum()
    probs = np.zeros_like(c)
    probs[mask] = floor * uniform + (1.0 - floor) * soft
    return probs


def _pairs(probs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p = np.asarray(probs, dtype=float)
    ii, jj = np.nonzero(np.triu(p, 1) > 0)
    w = p[ii, jj]
    return ii, jj, w / w.sum()


def sample_pair(
    probs: np.ndarray, rng: np.random.Generator, *, randomize_order: bool = True
) -> tuple[int, int]:
    """Draw one pair from a ``pair_distribution`` result.

    Returns model indices ``(top, bottom)``; with ``randomize_order`` (default) the two are
    swapped with probability 1/2, so position is independent of the pair (position bias
    is large: 82% of accepted completions were the top one in the original arena).
    """
    ii, jj, w = _pairs(probs)
    k = int(rng.choice(w.size, p=w))
    a, b = int(ii[k]), int(jj[k])
    if randomize_order and rng.random() < 0.5:
        a, b = b, a
    return a, b


def model_shares(probs: np.ndarray) -> np.ndarray:
    """Fraction of battles each model takes part in (sums to 2: two models per battle)."""
    p = np.triu(np.asarray(probs, dtype=float), 1)
    out: np.ndarray = p.sum(axis=0) + p.sum(axis=1)
    return out


def experienced_latency_quantiles(
    fits: Sequence[LogNormalFit], probs: np.ndarray, qs: Sequence[float] | float
) -> np.ndarray:
    """Quantiles (seconds) of the wait ``max(L_i, L_j)`` when pairs follow ``probs``."""
    mu, sigma = _params(fits)
    ii, jj, w = _pairs(probs)
    q = np.atleast_1d(np.asarray(qs, dtype=float))
    if np.any((q <= 0) | (q >= 1)):
        raise ValueError("quantiles must be in (0, 1)")
    # G = sum w F_i F_j; each term <= min F, and >= q once both F >= sqrt(q) (see docstring).
    a = np.full(q.shape, np.min(mu + sigma * ndtri(q[:, None]), axis=1))
    b = np.full(q.shape, np.max(mu + sigma * ndtri(np.sqrt(q)[:, None]), axis=1))
    mi, si, mj, sj = mu[ii], sigma[ii], mu[jj], sigma[jj]
    for _ in range(_BISECT_STEPS):
        m = 0.5 * (a + b)
        g = (ndtr((m[:, None] - mi) / si) * ndtr((m[:, None] - mj) / sj)) @ w
        below = g < q
        a = np.where(below, m, a)
        b = np.where(below, b, m)
    out: np.ndarray = np.exp(0.5 * (a + b))
    return out


def experienced_latency_mean(expected: np.ndarray, probs: np.ndarray) -> float:
    """Mean wait (seconds) under ``probs``: ``sum_ij p_ij E_ij``."""
    ii, jj, w = _pairs(probs)
    return float(np.asarray(expected)[ii, jj] @ w)


@dataclass(frozen=True)
class TauPoint:
    """One point of the trade-off curve. Shares are relative to uniform sampling:
    ``min_pair_share`` = min_ij p_ij / u, ``min_model_share`` = min_k share_k / (2/K)."""

    tau: float
    median: float
    p90: float
    mean: float
    min_pair_share: float
    min_model_share: float


@dataclass(frozen=True)
class TauChoice:
    """Result of ``choose_tau``: the chosen point, the uniform baseline and the curve."""

    chosen: TauPoint
    uniform: TauPoint
    reached: bool
    curve: list[TauPoint] = field(default_factory=list)

    @property
    def median_reduction(self) -> float:
        return 1.0 - self.chosen.median / self.uniform.median


def _evaluate(
    fits: Sequence[LogNormalFit],
    cost: np.ndarray,
    expected: np.ndarray,
    tau: float,
    floor: float,
    active: Sequence[bool] | np.ndarray | None,
) -> TauPoint:
    probs = pair_distribution(cost, tau=tau, floor=floor, active=active)
    med, p90 = experienced_latency_quantiles(fits, probs, [0.5, 0.9])
    k = cost.shape[0]
    mask = _pair_mask(k, active)
    act = np.ones(k, dtype=bool) if active is None else np.asarray(active, dtype=bool)
    shares = model_shares(probs)[act]
    return TauPoint(
        tau=tau,
        median=float(med),
        p90=float(p90),
        mean=float(expected[mask] @ probs[mask]),
        min_pair_share=float(probs[mask].min() * mask.sum()),
        min_model_share=float(shares.min() / (2.0 / act.sum())),
    )


def choose_tau(
    fits: Sequence[LogNormalFit],
    *,
    floor: float,
    target_median_reduction: float | None = None,
    target_median: float | None = None,
    taus: Sequence[float] | np.ndarray | None = None,
    cost: str = "expected",
    active: Sequence[bool] | np.ndarray | None = None,
) -> TauChoice:
    """Scan ``tau`` and pick the largest one meeting a target on the median wait.

    Give at most one target: ``target_median_reduction`` (e.g. 0.33 = 33% below uniform)
    or ``target_median`` (seconds). The largest qualifying ``tau`` is chosen because it is
    the closest to uniform, i.e. it spreads battles most evenly for that wait. The grid
    crossing is refined by bisection in ``log tau``. With no target the point with the
    lowest median on the grid is returned. ``reached`` is False when no ``tau`` meets the
    target (then the fastest point is returned). ``cost`` selects the pair cost matrix:
    ``"expected"`` (E[max], default) or ``"median"``.
    """
    if target_median is not None and target_median_reduction is not None:
        raise ValueError("give at most one target")
    lat = pair_latency_matrix(fits)
    if cost == "expected":
        c = lat.expected
    elif cost == "median":
        c = lat.median
    else:
        raise ValueError("cost must be 'expected' or 'median'")
    if taus is None:
        # Costs are seconds; tau spans 1 ms to 100x the largest pair cost.
        taus = np.geomspace(1e-3, 100.0 * float(np.max(c)), 61)
    grid = np.sort(np.asarray(taus, dtype=float))[::-1]

    def at(t: float) -> TauPoint:
        return _evaluate(fits, c, lat.expected, t, floor, active)

    uniform = at(math.inf)
    curve = [at(float(t)) for t in grid]
    if target_median_reduction is not None:
        goal = (1.0 - target_median_reduction) * uniform.median
    elif target_median is not None:
        goal = target_median
    else:
        best = min(curve, key=lambda p: p.median)
        return TauChoice(chosen=best, uniform=uniform, reached=True, curve=curve[::-1])

    ok = [i for i, p in enumerate(curve) if p.median <= goal]
    if not ok:
        best = min(curve, key=lambda p: p.median)
        return TauChoice(chosen=best, uniform=uniform, reached=False, curve=curve[::-1])
    first = ok[0]  # largest tau on the grid that meets the goal
    chosen = curve[first]
    if first > 0:
        hi, lo = math.log(grid[first - 1]), math.log(grid[first])  # hi fails, lo meets
        for _ in range(40):
            mid = 0.5 * (hi + lo)
            point = at(math.exp(mid))
            if point.median <= goal:
                lo, chosen = mid, point
            else:
                hi = mid
    return TauChoice(chosen=chosen, uniform=uniform, reached=True, curve=curve[::-1])
