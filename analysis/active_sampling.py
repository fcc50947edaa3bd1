"""Information-aware pair sampling: what one more vote on each pair would teach the board.

The latency-aware sampler (``analysis.latency.pair_distribution``) favours fast pairs; this
module adds a term for how much a vote on pair {i, j} would narrow what the published board
still has to learn, computed from the board's pair counts and ratings. The two are mixed by
one weight ``lambda`` (``information_weight``) under the coverage floor::

    pi_ij = floor / P + (1 - floor) * normalise(exp(-(1 - lambda) E_ij / tau) * info_ij^lambda)

``lambda = 0`` is today's latency-aware sampler, ``lambda = 1`` ignores latency.

The information term (``pair_information``)
-------------------------------------------
Fisher (Laplace) approximation of the Bradley-Terry fit, ratings ``theta`` in log-odds::

    H = sum_{i<j} (n_ij + n0) q_ij x_ij x_ij^T,   q_ij = s(theta_i - theta_j) (1 - s(...)),
    C = pinv(H)          (covariance of the mean-centred ratings, as the board centres them)

with ``x_ij = e_i - e_j`` and ``n0`` pseudo-votes per pair (``prior_votes``) so a model the
board has not seen has a large but finite variance. One more vote on {i, j} adds
``q x x^T`` to ``H``; by Sherman-Morrison the variance of any contrast ``c^T theta`` drops by::

    delta_c(ij) = q (c^T C x)^2 / (1 + q x^T C x)

``info_ij`` is the weighted sum of ``delta_c`` over the contrasts the board publishes:

* every model's own rating, ``c = e_k`` (its interval), weight 1;
* the gaps between neighbours in the top ``top + 1`` ranks, ``c = e_(r) - e_(r+1)`` for
  ``r = 1..top``, weight ``top_weight`` each (whether the top ranks are resolved);

and a pair with a model under the vote minimum is multiplied by ``1 + cold_weight`` (cold
start). Such a model is missing from the board, so its counts are 0 and its rating is
taken as the board mean: its variance, and so its pairs' information, is already large; the
factor keeps it first even when the mean-centred contrasts spread that variance over the
board (a vote among the others narrows the mean it is measured against).

For two models and the gap alone this is ``Var(R_i - R_j) = 1 / ((n + n0) q)`` minus the
same with one more vote: ``1 / ((n + n0) q) - 1 / ((n + n0 + 1) q)``.

Why not the Chatbot Arena paper's rule as written. Chiang et al. (2024, arXiv 2403.04132,
section 5) sample pair ``a`` with probability proportional to
``sqrt(S_a / n_a) - sqrt(S_a / (n_a + 1))``, the shrinkage of the confidence interval of
*that pair's* win rate (``S_a`` the variance of one vote). That is the special case
``c = x_ij`` of the rule above, with each pair's win rate estimated on its own. It drives the
pair counts toward equal (uniform) and cannot prefer the pairs that decide the top ranks, and
it ignores that a vote on {i, j} also narrows every rating linked to i or j through the fit.
The contrast sum keeps the paper's idea (sample where one vote shrinks an interval most) for
the intervals and rank gaps the board actually shows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from analysis.grouping import OUTCOME_A, OUTCOME_B, GroupedCounts

__all__ = [
    "COLD_WEIGHT",
    "PRIOR_VOTES",
    "TOP",
    "TOP_WEIGHT",
    "fit_pair_ratings",
    "pair_information",
    "pair_tables",
]

# Pseudo-votes per pair in the information term: a pair never played is worth one vote.
PRIOR_VOTES = 1.0
# Neighbour gaps among the top TOP + 1 ranks count as targets, each TOP_WEIGHT times a
# model's own interval; a pair with a model under the vote minimum, 1 + COLD_WEIGHT times.
TOP = 3
TOP_WEIGHT = 4.0
COLD_WEIGHT = 4.0
_NEWTON_STEPS = 50


def _sigmoid(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = 0.5 * (1.0 + np.tanh(0.5 * x))
    return out


def pair_tables(counts: GroupedCounts) -> tuple[np.ndarray, np.ndarray]:
    """(wins, games), K x K: ``wins[i, j]`` = battles i won against j (a tie is half a win
    each), ``games`` symmetric. Row weights are used when the counts carry them."""
    k = counts.n_models
    w = counts.row_weight()
    win_a = np.where(
        counts.outcome == OUTCOME_A, 1.0, np.where(counts.outcome == OUTCOME_B, 0, 0.5)
    )
    wins = np.zeros((k, k))
    np.add.at(wins, (counts.a, counts.b), w * win_a)
    np.add.at(wins, (counts.b, counts.a), w * (1.0 - win_a))
    return wins, wins + wins.T


def _laplacian(weights: np.ndarray) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    out: np.ndarray = np.diag(w.sum(axis=1)) - w
    return out


def fit_pair_ratings(
    wins: np.ndarray, *, prior_votes: float = 0.0, squared: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Bradley-Terry ratings (log-odds, mean 0) and their covariance from a wins table.

    ``prior_votes`` adds that many tied votes to every pair (0 = the plain maximum
    likelihood fit, which needs a connected comparison graph without perfect separation).
    The covariance is that of the mean-centred ratings: ``pinv`` of the information matrix
    at the fit, or, for weighted wins, the sandwich ``pinv(H) M pinv(H)`` with ``M`` built
    from ``squared`` (K x K symmetric sums of squared battle weights per pair).
    """
    w = np.asarray(wins, dtype=float) + 0.5 * prior_votes * (1.0 - np.eye(len(wins)))
    games = w + w.T
    k = len(w)
    theta = np.zeros(k)
    for _ in range(_NEWTON_STEPS):
        p = _sigmoid(theta[:, None] - theta[None, :])
        grad = (w - games * p).sum(axis=1)
        hess = _laplacian(games * p * (1.0 - p))
        step = np.linalg.pinv(hess) @ grad
        theta = theta + step
        theta -= theta.mean()
        if float(np.abs(step).max()) < 1e-10:
            break
    q = _sigmoid(theta[:, None] - theta[None, :])
    q = q * (1.0 - q)
    bread = np.linalg.pinv(_laplacian(games * q))
    if squared is None:
        return theta, bread
    return theta, bread @ _laplacian(np.asarray(squared, dtype=float) * q) @ bread


def pair_information(
    games: np.ndarray,
    theta: np.ndarray,
    *,
    cold: Sequence[bool] | np.ndarray | None = None,
    prior_votes: float = PRIOR_VOTES,
    top: int = TOP,
    top_weight: float = TOP_WEIGHT,
    cold_weight: float = COLD_WEIGHT,
) -> np.ndarray:
    """``info_ij`` (see the module docstring) in the strict upper triangle of a K x K array.

    ``games``: K x K symmetric pair counts of the published board (0 for a model not on it);
    ``theta``: ratings in log-odds (any centring; a model not on the board: the board mean);
    ``cold``: one flag per model, True under the vote minimum. Every pair's value is > 0.
    """
    n = np.asarray(games, dtype=float)
    t = np.asarray(theta, dtype=float)
    k = len(t)
    if n.shape != (k, k) or k < 2 or prior_votes <= 0:
        raise ValueError("games must be K x K for K >= 2 ratings, prior_votes > 0")
    p = _sigmoid(t[:, None] - t[None, :])
    q = p * (1.0 - p)
    off = 1.0 - np.eye(k)
    cov = np.linalg.pinv(_laplacian((n + prior_votes) * q * off))
    flags = np.zeros(k, dtype=bool) if cold is None else np.asarray(cold, dtype=bool)
    # Contrast rows: each model's own rating, then the top neighbour gaps.
    contrasts = [np.eye(k)]
    order = np.argsort(-np.where(flags, -np.inf, t), kind="stable")
    known = int((~flags).sum())
    for r in range(min(top, known - 1)):
        gap = np.zeros(k)
        gap[order[r]], gap[order[r + 1]] = 1.0, -1.0
        contrasts.append(np.sqrt(top_weight) * gap[None, :])
    c = np.vstack(contrasts)
    ii, jj = np.triu_indices(k, 1)
    u = cov[:, ii] - cov[:, jj]  # C x for every pair, one column each
    s = u[ii, np.arange(len(ii))] - u[jj, np.arange(len(ii))]  # x^T C x = Var(R_i - R_j)
    qij = q[ii, jj]
    gain = qij * ((c @ u) ** 2).sum(axis=0) / (1.0 + qij * s)
    gain *= 1.0 + cold_weight * (flags[ii] | flags[jj])
    out = np.zeros((k, k))
    out[ii, jj] = np.maximum(gain, np.finfo(float).tiny)
    return out
