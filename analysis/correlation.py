"""Rank and linear correlation between two leaderboards, with a Fisher-z interval.

Given two score vectors for the same models (e.g. arena ratings and a static benchmark),
``correlate`` returns Spearman's rho or Pearson's r, the number of models both cover,
scipy's p-value and a 95% interval for the correlation.

The interval is Fisher's: z = atanh(r) is close to normal, with standard deviation
1 / sqrt(n - 3) for Pearson's r and, for Spearman's rho, Bonett and Wright's
sqrt((1 + rho^2 / 2) / (n - 3)); the bounds are tanh(z -+ q sd). Spearman's rho on a few
models takes few values and reaches +-1 often; a rho of +-1 is moved half a step towards 0
(the next value rho can take is 1 - 12 / (n^3 - n)) so that its interval is not a point; that
interval then reaches +-1.
A percentile bootstrap over models, which this replaced, covered too rarely with few models;
``benchmarks/bench_correlation_coverage.py`` measures the coverage of both on simulated
leaderboards with a known correlation.

With fewer than ``MIN_MODELS`` common models (or a constant input vector) nothing can be
estimated: the result then has ``value``, ``ci_lower``, ``ci_upper`` and ``p_value`` all
NaN and the real ``n``. With exactly three models the value is given and the interval is
NaN (the variance needs n > 3). No exception, no warning.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

Method = Literal["spearman", "pearson"]

MIN_MODELS = 3
"""Fewer common models than this gives the empty (all-NaN) result."""

INTERVAL = {"pearson": "Fisher z", "spearman": "Fisher z, Bonett-Wright variance"}
"""How each method's interval is computed, as the pages and the API name it."""


@dataclass(frozen=True)
class CorrelationResult:
    """One correlation estimate with its interval."""

    method: str
    value: float
    ci_lower: float
    ci_upper: float
    n: int
    p_value: float
    confidence: float = 0.95
    models: tuple[str, ...] = ()
    """The models both score vectors cover, in the order used (empty for array input)."""

    @property
    def is_empty(self) -> bool:
        return math.isnan(self.value)

    @property
    def interval(self) -> str:
        return INTERVAL[self.method]


def fisher_interval(
    value: float, n: int, *, method: Method, confidence: float
) -> tuple[float, float]:
    """The Fisher-z interval of a correlation ``value`` on ``n`` models (NaN for n <= 3)."""
    if n <= 3 or math.isnan(value):
        return float("nan"), float("nan")
    if method == "spearman":
        # half a step below the largest |rho| short of 1, so +-1 keeps a finite z
        limit = 1.0 - 6.0 / (n**3 - n)
        variance = (1.0 + value * value / 2.0) / (n - 3)
    else:
        limit = 1.0 - 1e-12
        variance = 1.0 / (n - 3)
    z = math.atanh(min(max(value, -limit), limit))
    half = float(stats.norm.ppf(0.5 + confidence / 2.0)) * math.sqrt(variance)
    lower, upper = math.tanh(z - half), math.tanh(z + half)
    # the interval still holds the value itself when it was moved
    return (-1.0 if value <= -limit else lower), (1.0 if value >= limit else upper)


def correlate_arrays(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    method: Method = "spearman",
    confidence: float = 0.95,
    models: Sequence[str] = (),
) -> CorrelationResult:
    """Correlation of two aligned vectors (position i is the same model in both).

    Pairs where either value is NaN are dropped first."""
    if method not in ("spearman", "pearson"):
        raise ValueError(f"method must be 'spearman' or 'pearson', got {method!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    xa = np.asarray(x, dtype=float)
    ya = np.asarray(y, dtype=float)
    if xa.shape != ya.shape or xa.ndim != 1:
        raise ValueError(f"x and y must be 1-D and the same length, got {xa.shape} and {ya.shape}")
    names = tuple(models)
    if names and len(names) != len(xa):
        raise ValueError("models must name every position of x and y")
    keep = ~(np.isnan(xa) | np.isnan(ya))
    xa, ya = xa[keep], ya[keep]
    if names:
        names = tuple(name for name, k in zip(names, keep, strict=True) if k)
    n = len(xa)
    nan = float("nan")
    if n < MIN_MODELS or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        return CorrelationResult(method, nan, nan, nan, n, nan, confidence, names)

    test = stats.spearmanr(xa, ya) if method == "spearman" else stats.pearsonr(xa, ya)
    value, p_value = float(test.statistic), float(test.pvalue)
    lower, upper = fisher_interval(value, n, method=method, confidence=confidence)
    return CorrelationResult(method, value, lower, upper, n, p_value, confidence, names)


def correlate(
    scores_a: Mapping[str, float | None],
    scores_b: Mapping[str, float | None],
    *,
    method: Method = "spearman",
    confidence: float = 0.95,
) -> CorrelationResult:
    """Correlation between two leaderboards over the models both score.

    ``scores_a`` and ``scores_b`` map model name to score; models missing from either,
    or with a ``None``/NaN score, are left out; models are taken in sorted name order.
    """
    common = sorted(
        name
        for name in scores_a.keys() & scores_b.keys()
        if _is_number(scores_a[name]) and _is_number(scores_b[name])
    )
    x = [float(scores_a[name]) for name in common]  # type: ignore[arg-type]
    y = [float(scores_b[name]) for name in common]  # type: ignore[arg-type]
    return correlate_arrays(x, y, method=method, confidence=confidence, models=common)


def _is_number(value: float | None) -> bool:
    return value is not None and not math.isnan(float(value))
