"""Battle counts with covariates, for the contextual ("controlled") Bradley-Terry fit.

Computes a :class:`ContextCounts` table: rows of (top model, bottom model, outcome, covariate
values, optional user, optional weight) with the number of battles that had them, and the
standard covariates of a code-completion battle (:func:`style_features`), each seen from the
top completion's side so that the fit's logit is theta_top - theta_bottom + x . beta:

``top``          1 for every battle: the top-slot advantage (the position-aware fit's gamma).
``length``       (len_top - len_bottom) / (len_top + len_bottom), in characters or lines,
                 like LMArena's style features (0 when both are empty).
``latency``      (lat_top - lat_bottom) / (lat_top + lat_bottom): which side was slower.
``slow_top``     top-slot advantage times the centred log latency of the slower side (does
                 a slow pair change how often the top completion is taken?).
``length_ctx``, ``top_ctx``, ``latency_ctx``
                 the same times the centred log context length (prefix + suffix): context
                 interactions, kept only if they improve held-out likelihood
                 (``contextual_selection.select_features``).

Why moments. A logistic likelihood has no finite sufficient statistics in a continuous
covariate, so battles with different covariate values cannot be merged exactly, and binning
does not help at arena scale (two covariates in 16 bins times 9,900 ordered pairs of 100
models is 5M cells: more than the battles). Instead battles are merged per (top, bottom,
outcome, user) cell and each cell keeps the count n, the mean covariate vector m and the
scatter S = sum (x - m)(x - m)^T. The fit expands each cell's log-likelihood to second order
around m: sum_t l(mu + beta . e_t) = n l(mu) - 1/2 q(mu) beta^T S beta + O(beta^3 e^3), with
q = sigma (1 - sigma) and e_t = x_t - m (the first-order term vanishes). Within a cell the spread
is what limits the expansion, so :func:`group_contextual` also splits cells by ``bins``
quantile bins of each continuous covariate (default 3). Measured against a per-battle fit
(200,000 battles, 8 models, four covariates, ``tests/analysis/test_contextual.py``): without
bins (112 cells) coefficients were off by up to 0.77 of their standard error; 2 bins (896
cells) 0.07; 3 bins (3,003 cells) 0.03 and ratings within 0.02 points; 4 bins 0.014. The cells
number at most pairs x outcomes x bins^F (x users for clustered intervals), whatever the
number of battles. A SQL ``GROUP BY user, model_a, model_b, outcome, bin`` with ``AVG(x_j)``
and ``SUM(x_j * x_k)`` gives the same table (the constructor: ``features`` = means,
``scatter`` = sums of products minus n m m^T, ``stratum`` = the bin).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from analysis.grouping import CellCounts

__all__ = ["ContextCounts", "group_contextual", "style_features"]


@dataclass(frozen=True, eq=False)
class ContextCounts(CellCounts):
    """Cells of (a, b, outcome, user) with count, covariate means and scatter matrices.

    ``features`` (cells, F) are the cell means, ``scatter`` (cells, F, F) the sums of
    (x - mean)(x - mean)^T (None: every battle of a cell has the mean's values). Rows with
    the same (a, b, outcome, user) are merged (moments combined exactly); zero counts dropped.
    ``weight`` (optional) is the sum of the cell's battle weights.
    """

    models: tuple[str, ...]
    feature_names: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    count: np.ndarray
    features: np.ndarray
    scatter: np.ndarray | None = None
    user: np.ndarray | None = None
    weight: np.ndarray | None = None
    stratum: np.ndarray | None = None  # optional int per row: rows of different strata stay apart

    def __post_init__(self) -> None:
        """Check every array against the others and store it read-only (hence its length)."""
        a = np.asarray(self.a, dtype=np.int64).ravel()
        b = np.asarray(self.b, dtype=np.int64).ravel()
        o = np.asarray(self.outcome, dtype=np.int64).ravel()
        c = np.asarray(self.count, dtype=np.int64).ravel()
        f = len(self.feature_names)
        x = np.asarray(self.features, dtype=float).reshape(len(c), f)
        sc = None if self.scatter is None else np.asarray(self.scatter, float)
        k = len(self.models)
        if not (len(a) == len(b) == len(o) == len(c) == (len(c) if sc is None else len(sc))):
            raise ValueError("a, b, outcome, count and scatter must have the same length")
        if len(a) and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= k or np.any(a == b)):
            raise ValueError("model indices out of range or a model against itself")
        bad_o = len(o) > 0 and not 0 <= o.min() <= o.max() <= 2
        if np.any(c < 0) or not np.all(np.isfinite(x)) or bad_o:
            raise ValueError("counts must be non-negative, features finite, outcomes 0..2")
        u = None if self.user is None else np.asarray(self.user, dtype=np.int64).ravel()
        w = None if self.weight is None else np.asarray(self.weight, dtype=float).ravel()
        zero = np.zeros(len(a), dtype=np.int64)
        st = zero if self.stratum is None else np.asarray(self.stratum, dtype=np.int64).ravel()
        uu = zero if u is None else u
        cols = [a, b, o, uu, st]
        radix = [k, k, 3, int(uu.max()) + 1 if len(uu) else 1, int(st.max()) + 1 if len(st) else 1]
        key = zero.copy()
        for col, r in zip(cols, radix, strict=True):
            key = key * r + col
        ukey, inv = np.unique(key, return_inverse=True)
        uniq = np.empty((len(ukey), 5), dtype=np.int64)
        rest = ukey.copy()
        for j in range(4, -1, -1):
            uniq[:, j] = rest % radix[j]
            rest //= radix[j]
        m = len(uniq)
        n = np.bincount(inv, weights=c, minlength=m)
        # raw sums, then back to means and scatter: merging moments exactly
        sum_x = np.column_stack([np.bincount(inv, c * x[:, i], m) for i in range(f)])
        sum_xx = np.zeros((m, f, f))
        for i in range(f):
            for j in range(i, f):
                within = (
                    c * x[:, i] * x[:, j] if sc is None else sc[:, i, j] + c * x[:, i] * x[:, j]
                )
                sum_xx[:, i, j] = np.bincount(inv, within, m)
                sum_xx[:, j, i] = sum_xx[:, i, j]
        keep = n > 0
        n, sum_x, sum_xx, uniq = n[keep], sum_x[keep], sum_xx[keep], uniq[keep]
        mean = sum_x / n[:, None]
        scatter = sum_xx - n[:, None, None] * mean[:, :, None] * mean[:, None, :]
        weight = None if w is None else np.bincount(inv, weights=w, minlength=m)[keep]
        for name, value in (
            ("a", uniq[:, 0]),
            ("b", uniq[:, 1]),
            ("outcome", uniq[:, 2]),
            ("count", n.astype(np.int64)),
            ("features", mean),
            ("scatter", 0.5 * (scatter + scatter.transpose(0, 2, 1))),
            ("user", None if u is None else uniq[:, 3]),
            ("stratum", None if self.stratum is None else uniq[:, 4]),
            ("weight", weight),
            ("models", tuple(str(mm) for mm in self.models)),
            ("feature_names", tuple(str(ff) for ff in self.feature_names)),
        ):
            object.__setattr__(self, name, value)

    def select(self, names: Sequence[str]) -> ContextCounts:
        """The same cells with only the named features."""
        cols = [self.feature_names.index(n) for n in names]
        sc = self.scatter
        return replace(
            self,
            feature_names=tuple(names),
            features=self.features[:, cols],
            scatter=None if sc is None else sc[:, cols][:, :, cols],
        )

    def with_counts(self, count: np.ndarray) -> ContextCounts:
        """The same cells with other counts (moments kept per battle: the scatter scales)."""
        c = np.asarray(count, dtype=np.int64)
        ratio = c / np.maximum(self.count, 1)
        sc = None if self.scatter is None else self.scatter * ratio[:, None, None]
        w = None if self.weight is None else self.weight * ratio
        return replace(self, count=c, scatter=sc, weight=w)


def group_contextual(
    a: np.ndarray,
    b: np.ndarray,
    outcome: np.ndarray,
    features: np.ndarray,
    *,
    models: Sequence[str],
    feature_names: Sequence[str],
    user: np.ndarray | None = None,
    weight: np.ndarray | None = None,
    bins: int = 3,
) -> ContextCounts:
    """Per-battle arrays (model indices, covariates) -> cells with moments.

    ``bins`` > 1 also splits every cell by quantile bins of each covariate with more than
    ``bins`` distinct values (moments within each bin): more cells, smaller spread inside
    them, hence a smaller error of the second-order expansion."""
    x = np.asarray(features, dtype=float).reshape(len(np.asarray(a)), len(feature_names))
    stratum = None
    if bins > 1:
        stratum = np.zeros(len(x), dtype=np.int64)
        for j in range(x.shape[1]):
            if len(np.unique(x[:, j])) > bins:
                edges = np.quantile(x[:, j], np.linspace(0.0, 1.0, bins + 1)[1:-1])
                stratum = stratum * bins + np.searchsorted(edges, x[:, j], side="right")
    return ContextCounts(
        models=tuple(models),
        feature_names=tuple(feature_names),
        a=np.asarray(a),
        b=np.asarray(b),
        outcome=np.asarray(outcome),
        count=np.ones(len(x), dtype=np.int64),
        features=x,
        user=user,
        weight=weight,
        stratum=stratum,
    )


def _norm_diff(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    s = top + bottom
    return np.asarray(np.divide(top - bottom, s, out=np.zeros_like(s, dtype=float), where=s > 0))


def style_features(
    *,
    length_top: np.ndarray,
    length_bottom: np.ndarray,
    latency_top: np.ndarray | None = None,
    latency_bottom: np.ndarray | None = None,
    context_length: np.ndarray | None = None,
    interactions: bool = False,
) -> tuple[np.ndarray, tuple[str, ...]]:
    """The standard covariates (module docstring) as a (battles, F) matrix and their names.

    Latencies in seconds (positive); context length in characters. Log latencies and log
    context lengths are centred on their medians, so ``top`` stays the advantage at a
    typical latency and context.
    """
    lt, lb = np.asarray(length_top, dtype=float), np.asarray(length_bottom, dtype=float)
    cols: list[np.ndarray] = [np.ones(len(lt)), _norm_diff(lt, lb)]
    names = ["top", "length"]
    if latency_top is not None and latency_bottom is not None:
        ta, tb = np.asarray(latency_top, dtype=float), np.asarray(latency_bottom, dtype=float)
        slow = np.log(np.maximum(np.maximum(ta, tb), 1e-3))
        cols += [_norm_diff(ta, tb), slow - np.median(slow)]
        names += ["latency", "slow_top"]
    if interactions and context_length is not None:
        ctx = np.log1p(np.asarray(context_length, dtype=float))
        ctx -= np.median(ctx)
        cols += [cols[names.index(n)] * ctx for n in list(names)]
        names += [f"{n}_ctx" for n in list(names)]
    return np.column_stack(cols), tuple(names)
