"""Rank and linear correlation between two leaderboards, with a bootstrap interval over models.

Given two score vectors for the same models (e.g. arena ratings and a static benchmark),
``correlate`` returns Spearman's rho or Pearson's r, the number of models both cover,
scipy's p-value, and a percentile bootstrap 95% interval obtained by resampling
*models* with replacement (the unit of analysis is a model, not a battle).

The bootstrap is vectorised: all resamples are drawn as one ``(n_boot, n)`` index
matrix; for Spearman every resample is ranked within its own row (average ranks for
ties, the same convention as ``scipy.stats.spearmanr``) and Pearson is then taken row by
row. A resample in which either vector is constant (e.g. the same model drawn ``n``
times) has no defined correlation; such rows are dropped and the result reports how
many resamples were used.

With fewer than ``MIN_MODELS`` common models (or a constant input vector) nothing can be
estimated: the result then has ``value``, ``ci_lower``, ``ci_upper`` and ``p_value`` all
NaN, the real ``n``, and ``n_boot_used == 0``. No exception, no warning.
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

DEFAULT_N_BOOT = 2_000


@dataclass(frozen=True)
class CorrelationResult:
    """One correlation estimate with its bootstrap interval."""

    method: str
    value: float
    ci_lower: float
    ci_upper: float
    n: int
    p_value: float
    n_boot: int = 0
    """Resamples requested."""
    n_boot_used: int = 0
    """Resamples with a defined correlation (constant resamples dropped)."""
    confidence: float = 0.95
    models: tuple[str, ...] = ()
    """The models both score vectors cover, in the order used (empty for array input)."""

    @property
    def is_empty(self) -> bool:
        return math.isnan(self.value)


def _empty(
    method: str, n: int, n_boot: int, confidence: float, models: tuple[str, ...]
) -> CorrelationResult:
    nan = float("nan")
    return CorrelationResult(
        method=method,
        value=nan,
        ci_lower=nan,
        ci_upper=nan,
        n=n,
        p_value=nan,
        n_boot=n_boot,
        n_boot_used=0,
        confidence=confidence,
        models=models,
    )


def _rowwise_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair; NaN where a row of x or y is constant."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    sxx = np.einsum("ij,ij->i", xc, xc)
    syy = np.einsum("ij,ij->i", yc, yc)
    sxy = np.einsum("ij,ij->i", xc, yc)
    # A row is constant when all its values are identical, which is exact (the values are
    # copies of the same inputs), unlike testing the variance against a tolerance.
    constant = (np.ptp(x, axis=1) == 0) | (np.ptp(y, axis=1) == 0)
    denom = np.sqrt(np.where(constant, 1.0, sxx * syy))
    r = np.where(constant, np.nan, sxy / denom)
    return np.clip(r, -1.0, 1.0)


def correlate_arrays(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    method: Method = "spearman",
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    confidence: float = 0.95,
    models: Sequence[str] = (),
) -> CorrelationResult:
    """Correlation of two aligned vectors (position i is the same model in both).

    Pairs where either value is NaN are dropped first. ``seed`` makes the interval
    reproducible; ``n_boot=0`` skips the bootstrap (interval NaN).
    """
    if method not in ("spearman", "pearson"):
        raise ValueError(f"method must be 'spearman' or 'pearson', got {method!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
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
    if n < MIN_MODELS or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        return _empty(method, n, n_boot, confidence, names)

    if method == "spearman":
        test = stats.spearmanr(xa, ya)
        value, p_value = float(test.statistic), float(test.pvalue)
    else:
        test = stats.pearsonr(xa, ya)
        value, p_value = float(test.statistic), float(test.pvalue)

    lower = upper = float("nan")
    used = 0
    if n_boot > 0:
        rng = np.random.default_rng(seed)
        index = rng.integers(0, n, size=(n_boot, n))
        xb, yb = xa[index], ya[index]
        if method == "spearman":
            xb = stats.rankdata(xb, axis=1)
            yb = stats.rankdata(yb, axis=1)
        boot = _rowwise_pearson(xb, yb)
        boot = boot[~np.isnan(boot)]
        used = int(boot.size)
        if used:
            alpha = (1.0 - confidence) / 2.0
            lower, upper = (float(q) for q in np.quantile(boot, [alpha, 1.0 - alpha]))

    return CorrelationResult(
        method=method,
        value=value,
        ci_lower=lower,
        ci_upper=upper,
        n=n,
        p_value=p_value,
        n_boot=n_boot,
        n_boot_used=used,
        confidence=confidence,
        models=names,
    )


def correlate(
    scores_a: Mapping[str, float | None],
    scores_b: Mapping[str, float | None],
    *,
    method: Method = "spearman",
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = 0,
    confidence: float = 0.95,
) -> CorrelationResult:
    """Correlation between two leaderboards over the models both score.

    ``scores_a`` and ``scores_b`` map model name to score; models missing from either,
    or with a ``None``/NaN score, are left out. Models are taken in sorted name order
    so the bootstrap is reproducible whatever the mappings' order.
    """
    common = sorted(
        name
        for name in scores_a.keys() & scores_b.keys()
        if _is_number(scores_a[name]) and _is_number(scores_b[name])
    )
    x = [float(scores_a[name]) for name in common]  # type: ignore[arg-type]
    y = [float(scores_b[name]) for name in common]  # type: ignore[arg-type]
    return correlate_arrays(
        x, y, method=method, n_boot=n_boot, seed=seed, confidence=confidence, models=common
    )


def _is_number(value: float | None) -> bool:
    return value is not None and not math.isnan(float(value))
