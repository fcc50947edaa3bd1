"""Bradley-Terry ratings by maximum likelihood on grouped counts.

Computes, from :class:`~analysis.grouping.GroupedCounts`, one rating per model on the 400-point
scale: P(A beats B) = 1 / (1 + 10 ** ((R_B - R_A) / 400)), a tie (or "both bad") counting as
half a win for each side. Ratings are fixed either by their mean (``anchor=None``: the mean of
the *reference* models is ``anchor_value``, 1000 by default) or by one anchor model set exactly
to ``anchor_value`` (the Copilot Arena board anchors ``codestral-2405`` at 1000).

The reference is the set of models the board shows (``shown``, default: all) that are in the
Ford core (status ``ok``); only if none is, all shown rated models (then all rated models).
Models the board does not show, and unbounded ones whose rating comes from a virtual tie, so
cannot move the others: adding a model with 40 straight losses leaves the shown board where
it was. The anchor must be in the core as well; otherwise the fit falls back to the mean and
``scale_label`` says so ("mean of the 9 shown models held at 1000 (codestral-2405 is not
rated here)"), so a page can state what was applied.

Two anchor conventions, which differ only in the intervals (see ``intervals``):
``anchor_mode="shift"`` (default; what the published Copilot Arena board shows, where the
anchor keeps an interval of its own) moves the whole mean-normalised board by one constant;
``anchor_mode="per_round"`` (FastChat's ``scale_and_offset`` applied to every bootstrap round)
pins the anchor in every round, so its interval is a point and the others are relative to it.

With ``position_bias=True`` one more parameter, the log-odds advantage of the top slot, is
fitted (like home advantage); ``top_slot_p`` is then the expected score of the top completion
between two equal models.

Weighted counts (``counts.weight``, see ``weights``) give the weighted maximum-likelihood fit.

Solver: damped Newton on the exact Hessian, to a gradient norm (of the mean log-likelihood per
battle, natural log-odds units, Euclidean) below ``gtol`` = 1e-8; 3-5 iterations on simulated
arenas of 8-100 models and 3,000-1,000,000 battles (plain and position-aware).

Edge cases (see ``comparison_graph`` and ``docs/ratings.md``): only the main connected part is
rated; models whose MLE is infinite (outside the strongly connected core) get one virtual tie
against the average core model, which keeps them finite and flagged; models outside the main
part or without battles get NaN.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from analysis.bt_problem import BTProblem
from analysis.bt_solve import newton
from analysis.comparison_graph import GraphStructure, analyse_graph
from analysis.grouping import GroupedCounts
from analysis.scale import CENTRE, SCALE

__all__ = ["BTFit", "fit_bt", "normalise", "resolve_anchor", "resolve_reference"]


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
    anchor_applied: bool  # False when the anchor is not in the core (mean used instead)
    anchor_mode: str  # "shift" or "per_round" (matters for intervals only)
    gradient_norm: float
    iterations: int
    converged: bool
    structure: GraphStructure = field(repr=False)
    problem: BTProblem = field(repr=False)
    theta: np.ndarray = field(repr=False)  # solver parameters (D,), before normalisation
    reference: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    scale_label: str = ""  # what holds the scale, in words, e.g. "codestral-2405 held at 1000"

    @property
    def reference_models(self) -> tuple[str, ...]:
        """The models whose mean holds the scale (mean normalisation and the shift anchor)."""
        return tuple(m for m, r in zip(self.models, self.reference, strict=True) if r)

    @property
    def omega(self) -> np.ndarray:
        """Weights over the fitted models whose weighted mean is held (sums to 1)."""
        ref = self.reference[self.problem.fitted].astype(float)
        return ref / ref.sum() if ref.sum() > 0 else np.full(len(ref), 1.0 / max(len(ref), 1))

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

    def round_normalisation(self) -> tuple[np.ndarray, float]:
        """(weights over fitted models, value) to normalise resampled fits like this one.

        Mean normalisation and the "shift" anchor keep the reference mean where this fit has
        it; the "per_round" anchor pins the anchor at ``anchor_value`` every time.
        """
        k = self.problem.k
        if self.anchor_mode == "per_round" and self.anchor_local is not None:
            return np.eye(k)[self.anchor_local], self.anchor_value
        rated = self.rating[self.problem.fitted]
        return self.omega, float(self.omega @ rated) if k else self.anchor_value


def normalise(theta: np.ndarray, *, omega: np.ndarray, value: float) -> np.ndarray:
    """Natural log-odds (K, ...) -> ratings whose ``omega``-weighted mean is ``value``."""
    theta = np.asarray(theta, dtype=float)
    if theta.shape[0] == 0:
        return theta.copy()
    return np.asarray(value + SCALE * (theta - np.tensordot(omega, theta, axes=(0, 0))))


def resolve_anchor(
    counts: GroupedCounts, structure: GraphStructure, anchor: str | None
) -> tuple[bool, int | None]:
    """(anchor applied?, anchor index among rated models). ValueError for an unknown key.

    The anchor is applied only when it is in the core: an unbounded model's rating comes from
    a virtual tie and cannot hold a scale."""
    if anchor is None:
        return False, None
    idx = counts.index(anchor)
    if not structure.core[idx]:
        return False, None
    return True, int(np.count_nonzero(structure.main[:idx]))


def resolve_reference(
    counts: GroupedCounts, structure: GraphStructure, shown: Sequence[str] | np.ndarray | None
) -> np.ndarray:
    """Bool mask of the models whose mean holds the scale (see the module docstring).

    ``shown`` is a bool mask over ``counts.models`` or a collection of model keys (unknown
    keys are ignored: a slice may lack a model the board shows)."""
    k = counts.n_models
    if shown is None:
        mask = np.ones(k, dtype=bool)
    else:
        arr = np.asarray(shown)
        if arr.dtype == bool:
            if arr.shape != (k,):
                raise ValueError("a shown mask needs one entry per model")
            mask = arr.copy()
        else:
            keys = {str(m) for m in arr.tolist()}
            mask = np.array([m in keys for m in counts.models], dtype=bool)
    for candidate in (mask & structure.core, mask & structure.main, structure.main):
        if candidate.any():
            return candidate
    return np.zeros(k, dtype=bool)


def _scale_label(
    reference: np.ndarray,
    *,
    kind: str,
    anchor: str | None,
    applied: bool,
    value: float,
    mode: str,
) -> str:
    v = f"{value:g}"
    if applied and anchor is not None:
        if mode == "per_round":
            return f"{anchor} held at {v} in every bootstrap round"
        # the shift moves the mean-normalised board: its intervals keep measuring that
        return f"{anchor} held at {v} (intervals: distance from the shown models' average)"
    n = int(reference.sum())
    if n == 0:
        return f"no rated models (scale value {v})"
    label = f"mean of the {n} {kind} model{'s' if n != 1 else ''} held at {v}"
    if anchor is not None:
        label += f" ({anchor} is not rated here)"
    return label


def _check_options(
    counts: GroupedCounts, *, position_bias: bool, anchor_mode: str, anchor_value: float
) -> None:
    if anchor_mode not in ("shift", "per_round"):
        raise ValueError("anchor_mode must be 'shift' or 'per_round'")
    if position_bias and not counts.positions_known:
        raise ValueError("position_bias=True needs counts with known top/bottom positions")
    if not np.isfinite(anchor_value):
        raise ValueError("anchor_value must be finite")


def mean_weights(reference: np.ndarray, fitted: np.ndarray, anchor_local: int | None) -> np.ndarray:
    """Weights over the ``fitted`` models (indices) whose weighted mean is set to the anchor
    value: the reference models equally, or the anchor alone."""
    if anchor_local is not None:
        return np.asarray(np.eye(len(fitted))[anchor_local])
    omega = np.asarray(reference[fitted], dtype=float)
    total = float(omega.sum())
    return omega / total if total > 0 else omega


def fit_bt(
    counts: GroupedCounts,
    *,
    position_bias: bool = False,
    anchor: str | None = None,
    anchor_value: float = CENTRE,
    anchor_mode: Literal["shift", "per_round"] = "shift",
    shown: Sequence[str] | np.ndarray | None = None,
    gtol: float = 1e-8,
    max_iter: int = 100,
) -> BTFit:
    """Maximum-likelihood Bradley-Terry ratings (see the module docstring).

    ``shown`` (model keys or a bool mask) are the models the board shows: their core members
    hold the mean (``resolve_reference``). Long only because it fills the fit's fields.
    """
    _check_options(
        counts, position_bias=position_bias, anchor_mode=anchor_mode, anchor_value=anchor_value
    )
    structure = analyse_graph(counts.pooled())  # the same graph without a row per user
    problem = BTProblem(
        counts, fitted=structure.main, core=structure.core, position_bias=position_bias
    )
    applied, anchor_local = resolve_anchor(counts, structure, anchor)
    reference = resolve_reference(counts, structure, shown)
    omega = mean_weights(reference, problem.fitted, anchor_local)
    rating = np.full(counts.n_models, np.nan)
    gamma = None
    if problem.k == 0:
        theta = np.zeros(problem.d)
        gnorm, iters, converged = 0.0, 0, True
    else:
        n, s = problem.full_stats()
        res = newton(problem, np.zeros((problem.d, 1)), n, s, gtol=gtol, max_iter=max_iter)
        theta = res.theta[:, 0]
        gnorm, iters, converged = float(res.grad_norm[0]), res.iterations, bool(res.converged[0])
        rating[problem.fitted] = normalise(theta[: problem.k], omega=omega, value=anchor_value)
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
        reference=reference,
        scale_label=_scale_label(
            reference,
            kind="rated" if shown is None else "shown",
            anchor=anchor,
            applied=applied,
            value=anchor_value,
            mode=anchor_mode,
        ),
    )
