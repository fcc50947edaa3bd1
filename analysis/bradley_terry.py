"""Bradley-Terry ratings by maximum likelihood on grouped counts.

Computes, from :class:`~analysis.grouping.GroupedCounts`, one rating per model on the 400-point
scale: P(A beats B) = 1 / (1 + 10 ** ((R_B - R_A) / 400)), a tie (or "both bad") counting as
half a win for each side. Ratings are fixed either by their mean (``anchor=None``: the mean of
the rated models is ``anchor_value``, 1000 by default) or by one anchor model set exactly to
``anchor_value`` (the Copilot Arena board anchors ``codestral-2405`` at 1000).

Two anchor conventions, which differ only in the intervals (see ``intervals``):
``anchor_mode="shift"`` (default; what the published Copilot Arena board shows, where the
anchor keeps an interval of its own) moves the whole mean-normalised board by one constant;
``anchor_mode="per_round"`` (FastChat's ``scale_and_offset`` applied to every bootstrap round)
pins the anchor in every round, so its interval is a point and the others are relative to it.

With ``position_bias=True`` one more parameter, the log-odds advantage of the top slot, is
fitted (like home advantage); ``top_slot_p`` is then the expected score of the top completion
between two equal models.

Solver: damped Newton on the exact Hessian, to a gradient norm (of the mean log-likelihood per
battle, natural log-odds units, Euclidean) below ``gtol`` = 1e-8; typically 5-8 iterations.

Edge cases (see ``comparison_graph`` and ``docs/ratings.md``): only the main connected part is
rated; models whose MLE is infinite (outside the strongly connected core) get one virtual tie
against the average core model, which keeps them finite and flagged; models outside the main
part or without battles get NaN.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from analysis.bt_problem import BTProblem
from analysis.comparison_graph import GraphStructure, analyse_graph
from analysis.grouping import GroupedCounts

__all__ = ["SCALE", "BTFit", "fit_bt", "normalise", "resolve_anchor"]

SCALE = 400.0 / np.log(10.0)  # rating points per unit of natural log-odds


@dataclass(frozen=True)
class BTFit:
    """A Bradley-Terry fit on all data. ``rating`` is NaN for models that are not rated."""

    models: tuple[str, ...]
    rating: np.ndarray
    status: tuple[str, ...]
    rated: np.ndarray  # bool per model
    position_bias: bool
    top_slot_log_odds: float | None
    anchor: str | None
    anchor_value: float
    anchor_applied: bool  # False when the anchor is not rated (mean normalisation used instead)
    anchor_mode: str  # "shift" or "per_round" (matters for intervals only)
    gradient_norm: float
    iterations: int
    converged: bool
    structure: GraphStructure = field(repr=False)
    problem: BTProblem = field(repr=False)
    theta: np.ndarray = field(repr=False)  # solver parameters (D,), before normalisation

    @property
    def top_slot_p(self) -> float | None:
        """Expected score of the top completion between equal models (position-aware fit)."""
        if self.top_slot_log_odds is None:
            return None
        return float(1.0 / (1.0 + np.exp(-self.top_slot_log_odds)))

    @property
    def anchor_local(self) -> int | None:
        """Position of the anchor among the rated models, or None for mean normalisation."""
        if not self.anchor_applied or self.anchor is None:
            return None
        return int(np.searchsorted(self.problem.fitted, self.models.index(self.anchor)))

    def round_normalisation(self) -> tuple[int | None, float]:
        """(anchor position or None, value) to normalise resampled fits like this one.

        Mean normalisation and the "shift" anchor keep the mean of the rated models where this
        fit has it; the "per_round" anchor pins the anchor at ``anchor_value`` every time.
        """
        if self.anchor_mode == "per_round" and self.anchor_local is not None:
            return self.anchor_local, self.anchor_value
        rated = self.rating[self.problem.fitted]
        return None, float(rated.mean()) if len(rated) else self.anchor_value


def normalise(theta: np.ndarray, *, anchor_local: int | None, value: float) -> np.ndarray:
    """Natural log-odds (K, ...) -> ratings: ``value`` at the anchor, or as the mean."""
    theta = np.asarray(theta, dtype=float)
    if theta.shape[0] == 0:
        return theta.copy()
    ref = theta.mean(axis=0) if anchor_local is None else theta[anchor_local]
    return value + SCALE * (theta - ref)


def resolve_anchor(
    counts: GroupedCounts, structure: GraphStructure, anchor: str | None
) -> tuple[bool, int | None]:
    """(anchor applied?, anchor index among rated models). ValueError for an unknown key."""
    if anchor is None:
        return False, None
    idx = counts.index(anchor)
    if not structure.main[idx]:
        return False, None
    return True, int(np.count_nonzero(structure.main[:idx]))


def fit_bt(
    counts: GroupedCounts,
    *,
    position_bias: bool = False,
    anchor: str | None = None,
    anchor_value: float = 1000.0,
    anchor_mode: Literal["shift", "per_round"] = "shift",
    gtol: float = 1e-8,
    max_iter: int = 100,
) -> BTFit:
    """Maximum-likelihood Bradley-Terry ratings (see the module docstring)."""
    if anchor_mode not in ("shift", "per_round"):
        raise ValueError("anchor_mode must be 'shift' or 'per_round'")
    if position_bias and not counts.positions_known:
        raise ValueError("position_bias=True needs counts with known top/bottom positions")
    if not np.isfinite(anchor_value):
        raise ValueError("anchor_value must be finite")
    structure = analyse_graph(counts)
    problem = BTProblem(
        counts, fitted=structure.main, core=structure.core, position_bias=position_bias
    )
    applied, anchor_local = resolve_anchor(counts, structure, anchor)
    rating = np.full(counts.n_models, np.nan)
    gamma = None
    if problem.k == 0:
        theta = np.zeros(problem.d)
        gnorm, iters, converged = 0.0, 0, True
    else:
        n, s = problem.full_stats()
        res = problem.newton(np.zeros((problem.d, 1)), n, s, gtol=gtol, max_iter=max_iter)
        theta = res.theta[:, 0]
        gnorm, iters, converged = float(res.grad_norm[0]), res.iterations, bool(res.converged[0])
        rating[problem.fitted] = normalise(
            theta[: problem.k], anchor_local=anchor_local, value=anchor_value
        )
        if position_bias:
            gamma = float(theta[problem.k])
    return BTFit(
        models=counts.models,
        rating=rating,
        status=structure.status,
        rated=structure.main.copy(),
        position_bias=bool(position_bias),
        top_slot_log_odds=gamma,
        anchor=anchor,
        anchor_value=float(anchor_value),
        anchor_applied=applied,
        anchor_mode=anchor_mode,
        gradient_norm=gnorm,
        iterations=iters,
        converged=converged,
        structure=structure,
        problem=problem,
        theta=theta,
    )
