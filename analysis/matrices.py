"""Model-by-model matrices for the leaderboard pages, and average win rates.

Computes, from grouped counts and ratings:

* ``battle_count_matrix``: battles between i and j in either position (symmetric, int).
* ``win_fraction_matrix``: observed score of i against j, (wins + ties / 2) / battles, so
  W[i, j] + W[j, i] = 1; the same tie convention as the ratings, hence directly comparable with
  the predicted matrix. NaN where the pair never met and on the diagonal.
* ``predicted_win_rate_matrix``: 1 / (1 + 10 ** ((R_j - R_i) / 400)) from ratings (neutral
  position); NaN where a rating is NaN and on the diagonal.
* ``average_win_rate``: each row's mean over the other models, ignoring NaN -- against all
  rated opponents for the predicted matrix (uniform opponents, as on Chatbot Arena's chart), or
  over the opponents actually met for the observed one.
"""

from __future__ import annotations

import numpy as np

from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE, GroupedCounts
from analysis.scale import win_probability

__all__ = [
    "average_win_rate",
    "battle_count_matrix",
    "predicted_win_rate_matrix",
    "win_fraction_matrix",
]


def battle_count_matrix(counts: GroupedCounts) -> np.ndarray:
    """(K, K) int: battles between each pair, both positions together; zero diagonal."""
    k = counts.n_models
    m = np.zeros(k * k, dtype=np.int64)
    np.add.at(m, counts.a * k + counts.b, counts.count)
    square = m.reshape(k, k)
    return np.asarray(square + square.T)


def win_fraction_matrix(counts: GroupedCounts) -> np.ndarray:
    """(K, K) float: observed score of row model against column model (ties count half)."""
    k = counts.n_models
    a, b, o, c = counts.a, counts.b, counts.outcome, counts.count.astype(float)
    points = np.zeros(k * k)
    # points of the top model (a) against b, and of b against a
    np.add.at(points, a * k + b, c * ((o == OUTCOME_A) + 0.5 * (o == OUTCOME_TIE)))
    np.add.at(points, b * k + a, c * ((o == OUTCOME_B) + 0.5 * (o == OUTCOME_TIE)))
    n = battle_count_matrix(counts).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = points.reshape(k, k) / n
    w[n == 0] = np.nan
    np.fill_diagonal(w, np.nan)
    return np.asarray(w)


def predicted_win_rate_matrix(rating: np.ndarray) -> np.ndarray:
    """(K, K) float: P(row beats column) from 400-point ratings; NaN where undefined."""
    r = np.asarray(rating, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        p = win_probability(r[:, None], r[None, :])
    np.fill_diagonal(p, np.nan)
    return np.asarray(p)


def average_win_rate(matrix: np.ndarray) -> np.ndarray:
    """Row means ignoring NaN (NaN for rows without any value)."""
    m = np.asarray(matrix, dtype=float)
    ok = np.isfinite(m)
    n = ok.sum(axis=1)
    total = np.where(ok, m, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / np.maximum(n, 1), np.nan)
