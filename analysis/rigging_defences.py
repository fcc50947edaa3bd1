"""The board of a simulated rigged arena under three sets of defences, and what each gains.

Computes, for a ``RiggedArena``, the Bradley-Terry board (ratings, user-clustered sandwich
intervals, Rank (UB)) with

* ``off``: every vote counted with weight 1;
* ``today``: the product's rules (``rigging_rules.today_flags``) only file reports
  (``ANOMALY_AUTO_EXCLUDE`` off), so the board is the one of ``off``; ``today_excluding`` is
  the same rules with automatic exclusion on (a flagged user's whole history removed);
* ``new``: the proposed rules' flagged users held out (quarantine), and the others' votes
  weighted by ``analysis.weights``: repeated contexts of a user counted once, then each user's
  weight capped per day and in total; ``caps_only`` is the weighting without the rules.

A rigging outcome (``Outcome``) is the target's rating and ordinal rank, and Rank (UB).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.bradley_terry import fit_bt
from analysis.intervals import sandwich
from analysis.ranks import rank_ub
from analysis.rigging_rules import NewThresholds, new_flags, today_flags
from analysis.simulate_rigging import RiggedArena
from analysis.weights import dedup_weights, influence_weights

__all__ = ["DEFENCES", "Board", "Caps", "board", "defended_weights", "flagged_users"]

DEFENCES = ("off", "today", "today_excluding", "caps_only", "new")


@dataclass(frozen=True)
class Caps:
    """The per-user influence bound of the fit (RatingConfig's defaults)."""

    day: float | None = 50.0
    total: float | None = 200.0
    dedup: bool = True


@dataclass(frozen=True)
class Board:
    """One fitted board: per model rating, interval, ordinal rank (1 = best) and Rank (UB)."""

    rating: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    rank: np.ndarray
    rank_ub: np.ndarray
    votes: float  # the fit's total weight


def board(
    arena: RiggedArena, *, weight: np.ndarray | None = None, keep: np.ndarray | None = None
) -> Board:
    """The board of the kept votes with per-vote ``weight`` (default: all votes, weight 1)."""
    counts = arena.counts(weight=weight, keep=keep)
    fit = fit_bt(counts)
    iv = sandwich(fit, clustered=True)
    return Board(
        rating=fit.rating,
        lower=iv.lower,
        upper=iv.upper,
        rank=np.argsort(np.argsort(-fit.rating)) + 1,
        rank_ub=rank_ub(iv.lower, iv.upper),
        votes=float(counts.row_weight().sum()),
    )


def defended_weights(arena: RiggedArena, caps: Caps) -> np.ndarray:
    """Per-vote weights of the influence bound (dedup, then the per-day and total caps)."""
    base = dedup_weights(arena.user, arena.context) if caps.dedup else None
    return influence_weights(
        arena.user, arena.day, cap_day=caps.day, cap_total=caps.total, base=base
    )


def flagged_users(
    arena: RiggedArena, *, rules: str, thresholds: NewThresholds | None = None
) -> np.ndarray:
    """Users any rule of ``rules`` ("today" or "new") flags."""
    found = (
        today_flags(arena)
        if rules == "today"
        else new_flags(arena, n_models=len(arena.models), t=thresholds)
    )
    return np.asarray(np.logical_or.reduce(list(found.values())), dtype=bool)


def defended_board(
    arena: RiggedArena,
    defence: str,
    *,
    caps: Caps | None = None,
    thresholds: NewThresholds | None = None,
) -> tuple[Board, np.ndarray]:
    """The board under ``defence`` (one of ``DEFENCES``) and the users it flagged."""
    if defence == "off":
        return board(arena), np.zeros(arena.n_users, dtype=bool)
    if defence in ("today", "today_excluding"):
        flags = flagged_users(arena, rules="today")
        keep = ~flags[arena.user] if defence == "today_excluding" else None
        return board(arena, keep=keep), flags
    if defence not in ("new", "caps_only"):
        raise ValueError(f"unknown defence {defence!r}")
    weight = defended_weights(arena, caps or Caps())
    if defence == "caps_only":
        return board(arena, weight=weight), np.zeros(arena.n_users, dtype=bool)
    flags = flagged_users(arena, rules="new", thresholds=thresholds)
    return board(arena, weight=weight, keep=~flags[arena.user]), flags
