"""The leaderboard: ratings, intervals, ranks and page matrices in one JSON-storable value.

Computes, from grouped counts, everything a leaderboard snapshot stores: the Bradley-Terry fit
on all data (``bradley_terry``), 95% intervals by bootstrap or sandwich (``intervals``),
Rank (UB) (``ranks``), battle counts and the observed / predicted win-rate matrices
(``matrices``), per-model status codes (``comparison_graph``) and, for the position-aware fit,
the top-slot win probability with its interval. :func:`compute_leaderboard` is the one entry
point the recompute service calls; :meth:`Leaderboard.to_dict` gives plain JSON (NaN and the
infinite bound of an unbounded model -> None).

``shown`` (the models the board shows) sets the reference whose mean holds the scale, and
``scale_label`` says in words what was applied on this board. Intervals are by user
(``clustered``) whenever the counts carry a user column, unless ``clustered=False``.

Arrays follow ``counts.models`` order (not sorted); :meth:`Leaderboard.table` gives rows
sorted by rating.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from analysis.added_votes import OvertakeCost, overtake_cost
from analysis.bradley_terry import BTFit, fit_bt
from analysis.comparison_graph import RATED_STATUSES
from analysis.grouping import GroupedCounts
from analysis.intervals import IntervalResult, bootstrap, sandwich
from analysis.matrices import (
    average_win_rate,
    battle_count_matrix,
    predicted_win_rate_matrix,
    win_fraction_matrix,
)
from analysis.ranks import rank_ub
from analysis.robustness import PlaceHold, place_robustness, ranked_core
from analysis.scale import CENTRE

__all__ = ["Leaderboard", "TopSlotEstimate", "compute_leaderboard"]


@dataclass(frozen=True)
class TopSlotEstimate:
    """Expected score of the top completion between two equal models, with its 95% interval.

    ``p`` is from the fit on all data; ``median`` is the bootstrap median (``p`` for sandwich).
    """

    p: float
    lower: float
    upper: float
    median: float
    log_odds: float

    def to_dict(self) -> dict[str, float | None]:
        return {k: _num(getattr(self, k)) for k in ("p", "lower", "upper", "median", "log_odds")}


@dataclass(frozen=True)
class Leaderboard:
    """One leaderboard (overall or a slice). Per-model arrays follow ``models``.

    ``rank`` is Rank (UB), 0 = not ranked. ``status`` codes: ``ok``, ``unbounded_high``,
    ``unbounded_low``, ``unbounded`` (rated, with a flag), ``disconnected``, ``no_battles``
    (not rated: NaN numbers, rank 0). Matrices are model x model, NaN where undefined.
    """

    models: tuple[str, ...]
    rating: np.ndarray
    ci_lower: np.ndarray
    ci_upper: np.ndarray
    median: np.ndarray
    rank: np.ndarray
    votes: np.ndarray
    avg_win_rate: np.ndarray  # predicted, against all other rated models
    status: tuple[str, ...]
    win_fraction: np.ndarray
    battle_count: np.ndarray
    predicted_win_rate: np.ndarray
    top_slot: TopSlotEstimate | None
    method: str
    rounds: int
    seed: int
    anchor: str | None
    anchor_value: float
    total_battles: int
    anchor_applied: bool = False  # False: anchor unrated or None, so the mean is anchor_value
    anchor_mode: str = "shift"
    position_bias: bool = False
    observed_avg_win_rate: np.ndarray = field(default_factory=lambda: np.zeros(0))
    rating_sd: np.ndarray = field(default_factory=lambda: np.zeros(0))
    diagnostics: dict[str, Any] = field(default_factory=dict)
    scale_label: str = ""  # e.g. "codestral-2405 held at 1000" or "mean of the 9 shown ..."
    reference: tuple[str, ...] = ()  # models whose mean holds the scale
    clustered: bool = False  # intervals with users as the independent units
    clusters: int = 0  # units resampled: users with battles, or their groups (clustered only)
    cluster_users: int = 0  # users those units hold (= clusters unless users were grouped)
    weighted: bool = False  # weighted likelihood (counts with a weight column)
    robustness: tuple[PlaceHold, ...] = ()  # votes that hold each top place, best first
    overtake: OvertakeCost | None = None  # added wins that would put a rival above #1

    def table(self) -> list[dict[str, Any]]:
        """One JSON-safe dict per model, rated models first by rating, then the rest by name."""
        order = sorted(
            range(len(self.models)),
            key=lambda i: (
                not math.isfinite(self.rating[i]),
                -self.rating[i] if math.isfinite(self.rating[i]) else 0.0,
                self.models[i],
            ),
        )
        return [
            {
                "model": self.models[i],
                "rating": _num(self.rating[i]),
                "ci_lower": _num(self.ci_lower[i]),
                "ci_upper": _num(self.ci_upper[i]),
                "median": _num(self.median[i]),
                "rank": int(self.rank[i]) or None,
                "votes": int(self.votes[i]),
                "avg_win_rate": _num(self.avg_win_rate[i]),
                "status": self.status[i],
            }
            for i in order
        ]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types only: floats (NaN -> None), ints, strings, lists."""
        return {
            "models": list(self.models),
            "rating": _list(self.rating),
            "ci_lower": _list(self.ci_lower),
            "ci_upper": _list(self.ci_upper),
            "median": _list(self.median),
            "rank": [int(r) or None for r in self.rank],
            "votes": [int(v) for v in self.votes],
            "avg_win_rate": _list(self.avg_win_rate),
            "observed_avg_win_rate": _list(self.observed_avg_win_rate),
            "rating_sd": _list(self.rating_sd),
            "status": list(self.status),
            "win_fraction": [_list(row) for row in self.win_fraction],
            "battle_count": [[int(v) for v in row] for row in self.battle_count],
            "predicted_win_rate": [_list(row) for row in self.predicted_win_rate],
            "top_slot": None if self.top_slot is None else self.top_slot.to_dict(),
            "method": self.method,
            "rounds": int(self.rounds),
            "seed": int(self.seed),
            "anchor": self.anchor,
            "anchor_value": float(self.anchor_value),
            "anchor_applied": bool(self.anchor_applied),
            "anchor_mode": self.anchor_mode,
            "position_bias": bool(self.position_bias),
            "total_battles": int(self.total_battles),
            "scale_label": self.scale_label,
            "reference": list(self.reference),
            "clustered": bool(self.clustered),
            "clusters": int(self.clusters),
            "cluster_users": int(self.cluster_users),
            "weighted": bool(self.weighted),
            "robustness": [r.to_dict() for r in self.robustness],
            "diagnostics": {k: _jsonable(v) for k, v in self.diagnostics.items()},
        }


def _num(x: Any) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _list(a: np.ndarray) -> list[float | None]:
    return [_num(x) for x in np.asarray(a, dtype=float).ravel()]


def _jsonable(v: Any) -> Any:
    if isinstance(v, bool | str) or v is None:
        return v
    if isinstance(v, int | np.integer):
        return int(v)
    if isinstance(v, float | np.floating):
        return _num(v)
    return str(v)


def _top_slot(fit: BTFit, iv: IntervalResult) -> TopSlotEstimate | None:
    """The top slot's advantage with its interval, when the fit estimated one."""
    if fit.top_slot_log_odds is None or iv.top_slot is None:
        return None
    lo, hi, med = iv.top_slot
    p = fit.top_slot_p
    if p is None:
        raise RuntimeError("a fit with top-slot log-odds has their probability")
    return TopSlotEstimate(p=p, lower=lo, upper=hi, median=med, log_odds=fit.top_slot_log_odds)


def _overtake(
    fit: BTFit, shown: Sequence[str] | np.ndarray | None, places: int
) -> OvertakeCost | None:
    """The added wins a rival needs against #1, computed with the places' robustness."""
    ranked = ranked_core(fit, shown=shown)
    if places <= 0 or len(ranked) < 2:
        return None
    return overtake_cost(fit, ranked[0], below=ranked[1:])


def compute_leaderboard(
    counts: GroupedCounts,
    *,
    method: Literal["bootstrap", "sandwich"] = "bootstrap",
    rounds: int = 1000,
    seed: int = 0,
    anchor: str | None = None,
    anchor_value: float = CENTRE,
    position_bias: bool = False,
    anchor_mode: Literal["shift", "per_round"] = "shift",
    gtol: float = 1e-8,
    shown: Sequence[str] | np.ndarray | None = None,
    clustered: bool | None = None,
    robustness_places: int = 0,
    max_clusters: int | None = None,
    users: int | None = None,
) -> Leaderboard:
    """Fit, intervals, ranks and matrices for ``counts``.

    Long only because it fills the Leaderboard's fields, in one place.

    ``anchor`` (a model key) is set exactly to ``anchor_value``; without it, or when the anchor
    is not rated in this data (``anchor_applied`` False), the mean of the rated models is
    ``anchor_value``. ``anchor_mode="shift"`` (default, the published Copilot Arena board)
    moves the mean-normalised board by one constant, so the anchor keeps its own interval and
    ranks do not depend on the anchor; ``"per_round"`` pins the anchor in every bootstrap round
    (FastChat's convention): its interval is a point and the others are relative to it.
    ``rounds``/``seed`` apply to the bootstrap only. ``shown``: the models the board shows
    (keys or a bool mask; default all), whose core members hold the mean. ``clustered``:
    user-clustered intervals; None = whenever ``counts`` has a user column.
    ``robustness_places``: how many of the top-rated models get the votes that hold their
    place against every model below them (``robustness``; 0 = none). ``max_clusters``: with more
    users than this, clustered intervals resample users in that many fixed groups
    (``GroupedCounts.users_in_groups``). ``users``: how many users the counts' user column
    stands for, when the caller grouped them already (default: the distinct users in it).
    """
    if method not in ("bootstrap", "sandwich"):
        raise ValueError("method must be 'bootstrap' or 'sandwich'")
    if clustered is None:
        clustered = counts.user is not None
    cluster_users = 0
    if clustered and counts.user is not None:
        cluster_users = int(users) if users is not None else counts.active_users()
        if max_clusters is not None:
            counts = counts.users_in_groups(max_clusters)
    fit = fit_bt(
        counts,
        position_bias=position_bias,
        anchor=anchor,
        anchor_value=anchor_value,
        anchor_mode=anchor_mode,
        gtol=gtol,
        shown=shown,
    )
    if method == "bootstrap":
        iv = bootstrap(
            fit, rounds=rounds, seed=seed, gtol=gtol, keep_samples=False, clustered=clustered
        )
    else:
        iv = sandwich(fit, clustered=clustered)
    rated = np.array([s in RATED_STATUSES for s in fit.status], dtype=bool)
    lower = np.where(rated, iv.lower, np.nan)
    upper = np.where(rated, iv.upper, np.nan)
    predicted = predicted_win_rate_matrix(fit.rating)
    plain = counts.pooled()  # the matrices and votes ignore users
    observed = win_fraction_matrix(plain)
    return Leaderboard(
        models=counts.models,
        rating=fit.rating,
        ci_lower=lower,
        ci_upper=upper,
        median=np.where(rated, iv.median, np.nan),
        rank=rank_ub(lower, upper),
        votes=plain.battles_per_model(),
        avg_win_rate=average_win_rate(predicted),
        status=fit.status,
        win_fraction=observed,
        battle_count=battle_count_matrix(plain),
        predicted_win_rate=predicted,
        top_slot=_top_slot(fit, iv) if position_bias else None,
        method=method,
        rounds=iv.rounds,
        seed=int(seed),
        anchor=anchor,
        anchor_value=float(anchor_value),
        total_battles=counts.total,
        anchor_applied=fit.anchor_applied,
        anchor_mode=anchor_mode,
        position_bias=bool(position_bias),
        observed_avg_win_rate=average_win_rate(observed),
        rating_sd=np.where(rated, iv.sd, np.nan),
        diagnostics={
            "fit_iterations": fit.iterations,
            "fit_gradient_norm": fit.gradient_norm,
            "fit_converged": fit.converged,
            "ford_condition": fit.structure.ford_condition,
            **{f"interval_{k}": v for k, v in iv.diagnostics.items()},
        },
        scale_label=fit.scale_label,
        reference=fit.reference_models,
        clustered=iv.clustered,
        clusters=iv.clusters,
        cluster_users=cluster_users,
        weighted=counts.weight is not None,
        robustness=tuple(place_robustness(fit, shown=shown, places=robustness_places)),
        overtake=_overtake(fit, shown, robustness_places),
    )
