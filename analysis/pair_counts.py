"""Bradley-Terry on pairwise counts: the counts of one board or slice value, and their fit.

``PairCounts`` holds the battles between each pair of models (positions together) and the
points each won (wins + ties / 2); ``fit_pairs`` finds their maximum-likelihood strengths
by damped Newton with a vanishing ridge, with the observed information's inverse and the
models at the boundary (won or lost every battle). ``analysis.slice_test`` compares such
fits across the values of a slice dimension. No Django.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import log_expit

from analysis.scale import SCALE

__all__ = ["PairCounts", "PairFit", "fit_pairs"]

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


def log_likelihood(theta: np.ndarray, s: np.ndarray) -> float:
    """Sum over unordered pairs of s log p + (n - s) log (1 - p); each pair appears twice
    (so the battles n_ij enter through s_ji = n_ij - s_ij)."""
    d = theta[:, None] - theta[None, :]
    # Over ordered pairs, s_ij log sigma(d_ij) counts each pair's two outcomes once each.
    return float(np.sum(s * log_expit(d)))


def connected_parts(n: np.ndarray) -> tuple[int, np.ndarray]:
    """How many connected parts the pairs that met form, and each model's part."""
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


def _win_probability(theta: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :]))))


def _information(theta: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The observed (= expected) information of the strengths: a weighted graph Laplacian."""
    p = _win_probability(theta)
    w = n * p * (1.0 - p)
    return np.asarray(np.diag(w.sum(axis=1)) - w)


def _newton(
    n: np.ndarray, s: np.ndarray, *, ridge: float, stop: float, max_iter: int
) -> tuple[np.ndarray, bool, int]:
    """Damped Newton on the ridged log-likelihood: (strengths, converged, iterations).

    Converged when no gradient component exceeds ``stop``.
    """
    m = len(n)
    rowsum_s = s.sum(axis=1)

    def objective(t: np.ndarray) -> float:
        return log_likelihood(t, s) - 0.5 * ridge * float(t @ t)

    theta = np.zeros(m)
    value = objective(theta)
    iterations = 0
    for iterations in range(1, max_iter + 1):
        p = _win_probability(theta)
        grad = rowsum_s - (n * p).sum(axis=1) - ridge * theta
        if np.max(np.abs(grad)) < stop:
            return theta, True, iterations
        step = np.linalg.solve(_information(theta, n) + ridge * np.eye(m), grad)
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
    return theta, False, iterations


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
    n_comp, labels = connected_parts(n)
    stop = tol * max(1.0, counts.total)
    theta, converged, iterations = _newton(n, s, ridge=ridge, stop=stop, max_iter=max_iter)
    # Centre each connected part (the ridge already nearly does; make it exact).
    for c in range(n_comp):
        part = labels == c
        theta[part] -= theta[part].mean()
    info = _information(theta, n)
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
        loglik=log_likelihood(theta, s),
        n_params=int((sizes - 1).sum()),
        components=comp_full,
        covariance=cov_full,
        boundary=boundary_full,
        converged=converged,
        iterations=iterations,
    )
