"""Maximising the Bradley-Terry likelihood of a ``BTProblem`` for many count vectors at once.

``newton``: damped Newton with backtracking on the log-likelihood, every round at once, in
batches whose Hessians together stay near 16M numbers. ``chord``: Newton steps with one
fixed inverse Hessian (from the fit on all data): no per-round linear algebra, linear
convergence; rounds that stall are left for ``newton``. Arrays are (items, rounds), as in
``analysis.bt_problem``.
"""

from __future__ import annotations

import numpy as np

from analysis.bt_problem import BTProblem

__all__ = ["SolveResult", "chord", "newton"]

_HESSIAN_BUDGET = 1 << 24  # numbers in the Hessians of one Newton batch (128 MB)


class SolveResult:
    """Parameters (D, R), final normalised gradient norms (R,), iterations and success flags."""

    __slots__ = ("converged", "grad_norm", "iterations", "theta")

    def __init__(
        self, theta: np.ndarray, grad_norm: np.ndarray, converged: np.ndarray, iterations: int
    ) -> None:
        self.theta = theta
        self.grad_norm = grad_norm
        self.converged = converged
        self.iterations = iterations


def _joined(parts: list[SolveResult]) -> SolveResult:
    return SolveResult(
        np.concatenate([p.theta for p in parts], axis=1),
        np.concatenate([p.grad_norm for p in parts]),
        np.concatenate([p.converged for p in parts]),
        max(p.iterations for p in parts),
    )


def _backtrack(
    problem: BTProblem,
    th: np.ndarray,
    nn: np.ndarray,
    ss: np.ndarray,
    step: np.ndarray,
    *,
    slope: np.ndarray,
) -> np.ndarray:
    """Move each round of ``th`` (in place) along ``step``, halved until the log-likelihood
    rises enough (Armijo) or stays level; the rounds that never got there."""
    ll0 = problem.loglik(th, nn, ss)
    t = np.ones(th.shape[1])
    todo = np.ones(th.shape[1], dtype=bool)
    for _ in range(60):
        w = np.flatnonzero(todo)
        cand = th[:, w] + t[w] * step[:, w]
        ll1 = problem.loglik(cand, nn[:, w], ss[:, w])
        tol = 1e-12 * (1.0 + np.abs(ll0[w]))
        ok = (ll1 >= ll0[w] + 1e-4 * t[w] * slope[w]) | (ll1 >= ll0[w] - tol)
        th[:, w[ok]] = cand[:, ok]
        todo[w[ok]] = False
        t[w[~ok]] *= 0.5
        if not todo.any():
            break
    return todo


def newton(
    problem: BTProblem,
    theta: np.ndarray,
    n: np.ndarray,
    s: np.ndarray,
    *,
    gtol: float,
    max_iter: int = 100,
) -> SolveResult:
    """Damped Newton (backtracking on the log-likelihood), every round at once.

    Rounds are processed in batches whose Hessians together stay near 16M numbers.
    """
    batch = max(1, _HESSIAN_BUDGET // max(problem.d * problem.d, 1))
    if theta.shape[1] > batch:
        parts = [
            newton(
                problem,
                theta[:, i : i + batch],
                n[:, i : i + batch],
                s[:, i : i + batch],
                gtol=gtol,
                max_iter=max_iter,
            )
            for i in range(0, theta.shape[1], batch)
        ]
        return _joined(parts)
    theta = np.array(theta, dtype=float, copy=True)
    norm = np.maximum(n.sum(axis=0), 1.0)
    stuck = np.zeros(theta.shape[1], dtype=bool)
    gnorm = np.linalg.norm(problem.gradient(theta, n, s), axis=0) / norm
    it = 0
    while it < max_iter:
        active = (gnorm > gtol) & ~stuck
        if not active.any():
            break
        it += 1
        idx = np.flatnonzero(active)
        th, nn, ss = theta[:, idx], n[:, idx], s[:, idx]
        g = problem.gradient(th, nn, ss)
        h = problem.augment(problem.hessian(th, nn))
        step = np.linalg.solve(h, g.T[..., None])[..., 0].T
        todo = _backtrack(problem, th, nn, ss, step, slope=(g * step).sum(axis=0))
        stuck[idx[todo]] = True
        theta[:, idx] = th
        gnorm[idx] = np.linalg.norm(problem.gradient(th, nn, ss), axis=0) / norm[idx]
    return SolveResult(theta, gnorm, gnorm <= gtol, it)


def chord(
    problem: BTProblem,
    theta: np.ndarray,
    n: np.ndarray,
    s: np.ndarray,
    inv_hessian: np.ndarray,
    *,
    gtol: float,
    max_iter: int = 25,
) -> SolveResult:
    """Newton steps with one fixed inverse Hessian (from the fit on all data).

    Converges linearly at a rate set by how far each round's Hessian is from the fixed
    one (a few per cent on large data, so 3-5 steps). Rounds that stall are reported as
    not converged for the caller to finish with ``newton``.
    """
    theta = np.array(theta, dtype=float, copy=True)
    norm = np.maximum(n.sum(axis=0), 1.0)
    prev = np.full(theta.shape[1], np.inf)
    stalled = np.zeros(theta.shape[1], dtype=bool)
    it = 0
    while True:
        g = problem.gradient(theta, n, s)
        gnorm = np.linalg.norm(g, axis=0) / norm
        stalled |= gnorm > 0.5 * prev
        move = (gnorm > gtol) & ~stalled
        if not move.any() or it >= max_iter:
            break
        it += 1
        if move.all():
            theta += inv_hessian @ g
        else:
            idx = np.flatnonzero(move)
            theta[:, idx] += inv_hessian @ g[:, idx]
        prev = np.where(move, gnorm, prev)
    return SolveResult(theta, gnorm, gnorm <= gtol, it)
