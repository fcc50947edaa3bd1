"""User-clustered covariance of a Bradley-Terry fit: leave-one-user-out (CR3) sandwich.

Votes of one developer are not independent: one casts hundreds, with tastes of their own, so
the iid sandwich (one score outer product per battle) is too narrow. The cluster-robust
sandwich sums each user's scores g_u first and takes outer products over users. With a few
very active users (heavy-tailed activity) the plain version (CR1, H^-1 sum g_u g_u^T H^-1
times G / (G - 1)) still under-covers, because a heavy user's own votes pull the fit towards
them and shrink their residuals. The jackknife form (CR3) removes that: the change of the fit
when user u is left out is, to first order, d_u = (H - H_u)^-1 g_u, with H_u the user's own
information, and

    Cov = (G - 1) / G * sum_u (d_u - mean d)(d_u - mean d)^T.

Coverage of both forms and of the iid sandwich on simulated arenas is in ``docs/ratings.md``
(tests in ``tests/analysis/test_clustered.py``).

Cost: H_u for the heaviest ``exact_users`` users (default 512) costs one small solve each,
batched; the rest use H^-1 (their share of the information is then below that of the 512th
heaviest user, so (H - H_u)^-1 = H^-1 (1 + O(share))). Everything else is one sparse product
of the (users x categories) weights with the per-category score rows.
"""

from __future__ import annotations

import numpy as np

from analysis.bt_problem import BTProblem

__all__ = ["cluster_covariance"]

_BATCH_NUMBERS = 1 << 22  # numbers in the per-user Hessians of one batch (32 MB)


def cluster_covariance(
    prob: BTProblem, theta: np.ndarray, h: np.ndarray, *, exact_users: int = 512
) -> tuple[np.ndarray, int]:
    """(D, D) leave-one-user-out covariance of ``theta`` and the number of users G.

    ``h`` is the (augmented) information matrix of the fit on all data.
    """
    g, x = prob.cluster_scores(theta)
    n_users = len(g)
    d = np.linalg.solve(h, g.T).T  # H^-1 g_u for everyone
    if n_users < 2:
        return np.zeros((prob.d, prob.d)), n_users
    weight = np.asarray(x.sum(axis=1)).ravel()
    heavy = np.argsort(-weight, kind="stable")[: min(exact_users, n_users)]
    batch = max(1, _BATCH_NUMBERS // max(prob.d * prob.d, 1))
    xt = x.T.tocsr()
    for lo in range(0, len(heavy), batch):
        idx = heavy[lo : lo + batch]
        n_u, _ = prob.pair_stats(xt[:, idx].toarray())
        h_u = prob.hessian(np.repeat(theta[:, None], len(idx), axis=1), n_u, penalty=False)
        d[idx] = np.linalg.solve(h[None] - h_u, g[idx][..., None])[..., 0]
    d -= d.mean(axis=0)
    return (d.T @ d) * ((n_users - 1.0) / n_users), n_users
