"""The Bradley-Terry likelihood on grouped counts, batched over many count vectors at once.

Computes log-likelihood, gradient and Hessian of the (optionally position-aware) Bradley-Terry
model for R count vectors in one go (R = 1 for the fit on all data, R = bootstrap rounds), and
``analysis.bt_solve`` solves for the maximum (damped Newton, or a chord method: Newton with
one fixed, pre-inverted Hessian, that needs no per-round linear algebra).

Parameters are natural log-odds: ``theta`` (one per fitted model) and, for the position-aware
model, a last entry ``gamma`` (log-odds advantage of the top slot). For a battle with model
``i`` on top and ``j`` at the bottom, P(top wins) = expit(theta_i - theta_j + gamma); a tie is
half a win. Without position the pair is unordered and ``gamma`` is absent.

Data layout: battles are merged into *categories* -- (pair, result) cells, where a pair is
unordered for the plain model and (top, bottom) for the position-aware one -- and categories
into *pairs* with ``n`` battles and ``s`` points for the first model (wins + ties / 2).
Arrays are (items, rounds): parameters (D, R), pair statistics (P, R), categories (M, R).

Weights (``counts.weight``) turn every category's battle count into its weight sum, rescaled
so the weights add up to the number of battles (the scale of a weighted likelihood is
arbitrary; this keeps the virtual ties below worth one battle). ``cat_count`` stays the
integer count (the bootstrap redraws it) and ``cat_scale`` the mean weight per battle.
Categories also have a canonical order (``canon``) that depends on model *names*, not on
their positions in ``counts.models``, so seeded redraws do not depend on the model order.

Models outside the Ford core (see ``comparison_graph``) each get one virtual tie against the
average core model (a penalty row ``e_f - mean(core)``). The position-aware model gives
``gamma`` a virtual tie worth 1e-6 of the battles: it keeps gamma finite when the data say
"the top slot always wins" (or always loses), is negligible otherwise, and scales with the
data, so multiplying every count by the same factor leaves the fit unchanged. The likelihood
is invariant to adding a constant to every ``theta``; the solvers keep the sum of ``theta``
where it starts (the gradient sums to zero).
"""

from __future__ import annotations

import copy

import numpy as np
from scipy.sparse import coo_matrix, csr_matrix
from scipy.special import expit, log_expit

from analysis.grouping import OUTCOME_A, OUTCOME_TIE, GroupedCounts

__all__ = ["GAMMA_PRIOR_WEIGHT", "BTProblem"]

GAMMA_PRIOR_WEIGHT = 1e-6  # virtual battles per real battle behind the top-slot tie

_Y = np.array([1.0, 0.5, 0.0])  # result codes 0 = first wins, 1 = tie, 2 = second wins


class BTProblem:
    """Pairs, categories and penalty rows for the models in ``fitted``.

    ``fitted`` and ``core`` are bool masks over ``counts.models``. Rows of ``counts`` touching a
    model outside ``fitted`` are ignored (``row_category`` is -1 for them).
    """

    def __init__(
        self,
        counts: GroupedCounts,
        *,
        fitted: np.ndarray,
        core: np.ndarray,
        position_bias: bool,
    ) -> None:
        fitted = np.asarray(fitted, dtype=bool)
        self.n_models = counts.n_models
        self.fitted = np.flatnonzero(fitted)
        k = len(self.fitted)
        self.k = k
        self.has_gamma = bool(position_bias)
        self.d = k + int(self.has_gamma)
        ucat, inverse, count, weight = self._categorise(counts, fitted)
        self._weigh(counts, len(ucat), inverse, count, weight)
        self._index_pairs(ucat)
        self.canon = self._canonical_order(counts.models)
        self.row_user = counts.user
        self.row_weight = counts.row_weight()
        if self.weighted:
            self.row_weight *= self.weight_factor
        self._build_operators()
        self.null = np.zeros(self.d)
        self.null[:k] = 1.0
        self._set_core(np.asarray(core, dtype=bool)[self.fitted])

    def _categorise(
        self, counts: GroupedCounts, fitted: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The present categories (sorted keys), each pooled row's category, its count and
        weight; sets ``row_category`` for the rows of ``counts``."""
        k = self.k
        local = np.full(counts.n_models, -1, dtype=np.int64)
        local[self.fitted] = np.arange(k)
        # Categories from the counts pooled over users (one row per top, bottom, outcome);
        # rows per user are then looked up in them, not classified one by one.
        pooled = counts.pooled()
        keep = fitted[pooled.a] & fitted[pooled.b]
        la, lb = local[pooled.a[keep]], local[pooled.b[keep]]
        o, c = pooled.outcome[keep], pooled.count[keep]
        w_rows = pooled.row_weight()[keep]
        if self.has_gamma:
            first, second = la, lb
            code = np.where(o == OUTCOME_A, 0, np.where(o == OUTCOME_TIE, 1, 2))
        else:
            first, second = np.minimum(la, lb), np.maximum(la, lb)
            first_on_top = la < lb
            code = np.where(o == OUTCOME_TIE, 1, np.where((o == OUTCOME_A) == first_on_top, 0, 2))
        cat_key = (first * k + second) * 3 + code
        if 3 * k * k <= max(1 << 16, 8 * len(cat_key)):
            present = np.bincount(cat_key, minlength=3 * k * k) > 0
            ucat = np.flatnonzero(present)
            inverse = (np.cumsum(present) - 1)[cat_key]
        else:
            ucat, inverse = np.unique(cat_key, return_inverse=True)
        self.row_category = np.full(len(pooled.count), -1, dtype=np.int64)
        self.row_category[keep] = inverse
        if pooled is not counts:
            n = counts.n_models
            pooled_key = (pooled.a * n + pooled.b) * 3 + pooled.outcome  # sorted: canonical rows
            row_key = counts.a * n
            row_key += counts.b
            row_key *= 3
            row_key += counts.outcome
            self.row_category = self.row_category[np.searchsorted(pooled_key, row_key)]
        return ucat, inverse, c, w_rows

    def _weigh(
        self,
        counts: GroupedCounts,
        n_categories: int,
        inverse: np.ndarray,
        count: np.ndarray,
        weight: np.ndarray,
    ) -> None:
        """Battles and weights per category (see module doc: weights sum to the battles)."""
        self.cat_count = np.bincount(inverse, weights=count, minlength=n_categories).astype(
            np.int64
        )
        cat_weight = np.bincount(inverse, weights=weight, minlength=n_categories)
        w_total = float(cat_weight.sum())
        self.weighted = counts.weight is not None
        if self.weighted and w_total > 0:
            cat_weight *= self.cat_count.sum() / w_total
        self.weight_factor = self.cat_count.sum() / w_total if w_total > 0 else 1.0
        self.cat_weight = cat_weight
        self.cat_scale = cat_weight / np.maximum(self.cat_count, 1)

    def _index_pairs(self, ucat: np.ndarray) -> None:
        """Categories grouped into pairs: each category's code, result and pair."""
        k = self.k
        self.cat_code = ucat % 3
        self.cat_y = _Y[self.cat_code]
        pair_key = ucat // 3  # sorted
        new_pair = np.ones(len(pair_key), dtype=bool)
        new_pair[1:] = pair_key[1:] != pair_key[:-1]
        self.pair_start = np.flatnonzero(new_pair)
        self.cat_pair = np.cumsum(new_pair) - 1
        upair = pair_key[self.pair_start]
        self.pi = upair // k if k else upair
        self.n_pairs = len(upair)
        self.pj = upair % k if k else upair
        self.n_categories = len(ucat)
        self.total = int(self.cat_count.sum())

    def _build_operators(self) -> None:
        """Sparse maps from categories to pair sums, pairs to gradient and to Hessian."""
        k = self.k
        p, m = self.n_pairs, self.n_categories
        indptr = np.append(self.pair_start, m)
        self._sum_n = csr_matrix((np.ones(m), np.arange(m), indptr), shape=(p, m))
        self._sum_s = csr_matrix((self.cat_y, np.arange(m), indptr), shape=(p, m))
        cols = np.arange(p)
        rows = [self.pi, self.pj]
        vals = [np.ones(p), -np.ones(p)]
        if self.has_gamma:
            rows.append(np.full(p, k))
            vals.append(np.ones(p))
        self._at = csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.tile(cols, len(rows)))),
            shape=(self.d, p),
        )
        # Hessian map: H[a, b] += v * x_a * x_b for the nonzeros of each pair's design row x
        hr, hc, hv = [], [], []
        for ra, va in zip(rows, vals, strict=True):
            for rb, vb in zip(rows, vals, strict=True):
                hr.append(ra * self.d + rb)
                hc.append(cols)
                hv.append(va * vb)
        self._qt = coo_matrix(
            (np.concatenate(hv), (np.concatenate(hr), np.concatenate(hc))),
            shape=(self.d * self.d, p),
        ).tocsr()
        # the same map for one vector at a time, as a bincount (faster than the sparse product)
        self._h_flat = np.concatenate(hr)
        self._h_val = np.concatenate(hv)
        self._h_pair = np.concatenate(hc)

    def _canonical_order(self, names: tuple[str, ...]) -> np.ndarray:
        """Category order by (name, name, outcome): the same for any order of the models."""
        rank = np.argsort(np.argsort(np.array(names, dtype=object)))
        if len(self.cat_code) == 0:
            return np.zeros(0, dtype=np.int64)
        r1 = rank[self.fitted[self.pi[self.cat_pair]]]
        r2 = rank[self.fitted[self.pj[self.cat_pair]]]
        code = self.cat_code
        if not self.has_gamma:  # unordered pair: orient it by name
            flip = r1 > r2
            r1, r2 = np.where(flip, r2, r1), np.where(flip, r1, r2)
            code = np.where(flip, 2 - code, code)
        return np.asarray(np.lexsort((code, r2, r1)))

    def cluster_weights(self) -> csr_matrix | None:
        """(users, categories) weight sums per user as a CSR matrix; None without users."""
        if self.row_user is None:
            return None
        keep = self.row_category >= 0
        n_users = int(self.row_user.max()) + 1 if len(self.row_user) else 0
        return csr_matrix(
            (self.row_weight[keep], (self.row_user[keep], self.row_category[keep])),
            shape=(n_users, self.n_categories),
        )

    def _set_core(self, core_local: np.ndarray) -> None:
        """Virtual-tie rows: one per model outside the core, plus a light one for gamma."""
        k = self.k
        self.core_local = core_local
        self.penalised = np.flatnonzero(~core_local)
        weights = core_local if core_local.any() else np.ones(k, dtype=bool)
        omega = weights / weights.sum() if k else np.zeros(0)
        pen = np.zeros((len(self.penalised) + int(self.has_gamma), self.d))
        pen[np.arange(len(self.penalised)), :k] = -omega
        pen[np.arange(len(self.penalised)), self.penalised] += 1.0
        pen_w = np.ones(len(pen))
        if self.has_gamma:
            pen[-1, k] = 1.0
            pen_w[-1] = GAMMA_PRIOR_WEIGHT * max(self.total, 1)
        self.pen = pen
        self.pen_w = pen_w

    def with_core(self, core_local: np.ndarray) -> BTProblem:
        """The same data with another core (hence other virtual-tie rows)."""
        clone = copy.copy(self)
        clone._set_core(np.asarray(core_local, dtype=bool))
        return clone

    # ----------------------------------------------------------------- statistics
    def pair_stats(self, cat_counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-pair battles ``n`` and first-model points ``s`` from category counts (M, R)."""
        x = np.asarray(cat_counts, dtype=float)
        if x.ndim == 1:
            x = x[:, None]
        return np.asarray(self._sum_n @ x), np.asarray(self._sum_s @ x)

    def full_stats(self) -> tuple[np.ndarray, np.ndarray]:
        return self.pair_stats(self.cat_weight)

    # ----------------------------------------------------------------- model terms
    def logits(self, theta: np.ndarray) -> np.ndarray:
        lg = theta[self.pi] - theta[self.pj]
        if self.has_gamma:
            lg += theta[self.k]
        return np.asarray(lg)

    def loglik(self, theta: np.ndarray, n: np.ndarray, s: np.ndarray) -> np.ndarray:
        lg = self.logits(theta)
        ll = (s * log_expit(lg) + (n - s) * log_expit(-lg)).sum(axis=0)
        if len(self.pen):
            lp = self.pen @ theta
            ll += (0.5 * self.pen_w[:, None] * (log_expit(lp) + log_expit(-lp))).sum(axis=0)
        return np.asarray(ll)

    def prob_first(self, theta: np.ndarray) -> np.ndarray:
        """P(first model of each pair wins), (P, R); exp(theta) form when it cannot overflow."""
        if theta.size and np.abs(theta).max() > 300.0:
            return np.asarray(expit(self.logits(theta)))
        e = np.exp(theta[: self.k])
        ei = e[self.pi]
        if self.has_gamma:
            ei *= np.exp(theta[self.k])
        ej = e[self.pj]
        ej += ei
        return np.asarray(np.divide(ei, ej, out=ei))

    def gradient(self, theta: np.ndarray, n: np.ndarray, s: np.ndarray) -> np.ndarray:
        r = self.prob_first(theta)
        r *= n
        np.subtract(s, r, out=r)
        g = np.asarray(self._at @ r)
        if len(self.pen):
            g += self.pen.T @ (self.pen_w[:, None] * (0.5 - expit(self.pen @ theta)))
        return g

    def hessian(self, theta: np.ndarray, n: np.ndarray, *, penalty: bool = True) -> np.ndarray:
        """Negative Hessian of the log-likelihood, shape (R, D, D) (without the virtual ties
        if ``penalty`` is False)."""
        p = expit(self.logits(theta))
        h = np.asarray(self._qt @ (n * p * (1.0 - p)))
        h = h.reshape(self.d, self.d, -1).transpose(2, 0, 1).copy()
        if penalty and len(self.pen):
            pp = expit(self.pen @ theta)
            v = self.pen_w[:, None] * pp * (1.0 - pp)
            h += np.einsum("fd,fr,fe->rde", self.pen, v, self.pen)
        return h

    def meat(self, theta: np.ndarray) -> np.ndarray:
        """Sum over real battles of score outer products, centred (D, D), on all data."""
        return self.information_and_meat(theta)[1]

    def information_and_meat(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Negative Hessian (with the virtual ties) and the centred meat, on all data, from one
        sparse product (the sandwich needs both)."""
        p = expit(self.logits(theta[:, None]))[:, 0]
        n, s = self.full_stats()
        # per battle (w (y - p))^2; weights are taken as constant within a category
        resid2 = self.cat_weight * self.cat_scale * (self.cat_y - p[self.cat_pair]) ** 2
        b2 = np.bincount(self.cat_pair, weights=resid2, minlength=self.n_pairs)
        dd = self.d * self.d
        curv = (n[:, 0] * p * (1.0 - p))[self._h_pair] * self._h_val
        h: np.ndarray = np.bincount(self._h_flat, curv, dd).astype(float).reshape(self.d, self.d)
        b2v = b2[self._h_pair] * self._h_val
        meat: np.ndarray = np.bincount(self._h_flat, b2v, dd).astype(float).reshape(self.d, self.d)
        if len(self.pen):
            pp = expit(self.pen @ theta)
            h = h + (self.pen.T * (self.pen_w * pp * (1.0 - pp))) @ self.pen
        score = np.asarray(self._at @ (s[:, 0] - n[:, 0] * p))
        if self.total:
            meat = meat - np.outer(score, score) / self.total
        return h, meat

    def cluster_scores(self, theta: np.ndarray) -> tuple[np.ndarray, csr_matrix]:
        """(users with battles, D) summed score of each user at ``theta``, and the users'
        (users, categories) weight matrix (CSR), both restricted to users with battles."""
        x = self.cluster_weights()
        if x is None:
            raise ValueError("clustered intervals need counts with a user column")
        active = np.flatnonzero(np.asarray(x.sum(axis=1)).ravel() > 0)
        x = x[active]
        p = expit(self.logits(theta[:, None]))[:, 0]
        resid = self.cat_y - p[self.cat_pair]
        design = self._at.T.tocsr()[self.cat_pair]  # (M, D): the design row of each category
        scores = np.asarray((x @ design.multiply(resid[:, None]).tocsr()).todense())
        return scores, x

    def augment(self, h: np.ndarray) -> np.ndarray:
        """Add ``c * null null^T`` so the shift direction is solvable (H is singular there)."""
        if self.k == 0:
            return h
        scale = np.trace(h, axis1=-2, axis2=-1) / max(self.d, 1) + 1e-300
        out = h + (scale / self.k)[..., None, None] * np.outer(self.null, self.null)
        return np.asarray(out)
