"""The board a release reproduces: the overall board fitted on exactly the released battles.

Fitted the way the recompute fits the overall board (leaderboard.fitting with the arena's
RatingConfig: method, rounds, seed, anchor, the vote minimum, user-clustered intervals with
user-less battles as independent votes, the configured vote weights), with every released
model shown. Importing the release into a fresh arena and recomputing gives this board
within bootstrap noise (tests/releases/test_round_trip.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.conf import settings

from analysis.grouping import GroupedCounts, group_battles
from analysis.weights import influence_weights, inverse_pair_count_weights
from leaderboard.fitting import FitSettings, fit_board
from leaderboard.models import RatingConfig
from leaderboard.weighting import MIN_PAIR_COUNT

NO_USER = -1


def _votes_kept(
    a: np.ndarray, b: np.ndarray, n_models: int, min_votes: int
) -> tuple[np.ndarray, np.ndarray]:
    """Which models reach the vote minimum, and which battles are between two of them."""
    votes = np.bincount(a, minlength=n_models) + np.bincount(b, minlength=n_models)
    keep = votes >= min_votes
    return keep, keep[a] & keep[b]


def release_board(
    *,
    models: list[str],
    a: np.ndarray,
    b: np.ndarray,
    outcome: np.ndarray,
    user: np.ndarray,
    pair_probability: np.ndarray,
    day: np.ndarray | None = None,
) -> dict[str, Any]:
    """The board of battles given as model indices into `models`, engine outcome codes,
    user indices (NO_USER for none), pair probabilities (NaN where none) and UTC day numbers
    (for the per-user influence bound; None: all on one day)."""
    config = RatingConfig.current()
    bound = _influence(config, user, day)
    keep_model, rows = _votes_kept(a, b, len(models), config.min_model_votes)
    if not rows.any():
        return {"models": [], "battles": 0, "label": "no model reached the vote minimum"}
    shown = [m for m, k in zip(models, keep_model, strict=True) if k]
    index = np.cumsum(keep_model) - 1
    a, b, outcome = index[a[rows]], index[b[rows]], outcome[rows]
    user, probability = user[rows], pair_probability[rows]
    clustered = config.intervals == RatingConfig.Intervals.CLUSTERED
    weight = None
    if config.weights == RatingConfig.Weights.PROPENSITY:
        k = len(shown)
        n_pairs = k * (k - 1) / 2 if k > 1 else 1.0
        known = np.isfinite(probability) & (probability > 0)
        weight = np.where(known, 1.0 / (n_pairs * np.where(known, probability, 1.0)), 1.0)
    if bound is not None:
        weight = bound[rows] if weight is None else weight * bound[rows]
    userless = int(user.max()) + 1 if len(user) else 0
    counts = group_battles(
        a,
        b,
        outcome,
        models=shown,
        user=np.where(user == NO_USER, userless, user) if clustered else None,
        weight=weight,
    )
    if clustered:
        counts = counts.independent_user(userless)
    if config.weights == RatingConfig.Weights.PAIR_COUNT:
        counts = inverse_pair_count_weights(counts, min_pair_count=MIN_PAIR_COUNT)
    board = fit_board(
        counts,
        settings=FitSettings(
            anchor=config.anchor.key if config.anchor is not None else None,
            anchor_value=config.anchor_value,
            method=config.method,
            seed=int(config.seed),
            shown=tuple(shown),
            max_clusters=settings.ARENA_MAX_USER_CLUSTERS,
        ),
        rounds=config.rounds,
    )
    return {
        "models": board.table(),
        "battles": _total(counts),
        "method": board.method,
        "rounds": int(board.rounds),
        "clustered": bool(board.clustered),
        "weights": config.weights,
        "label": board.scale_label,
    }


def _influence(config: RatingConfig, user: np.ndarray, day: np.ndarray | None) -> np.ndarray | None:
    """Per-battle weights of the per-user influence bound (leaderboard/influence.py), over
    all released battles; battles without a user are never capped. A release carries no
    context fingerprint, so repeated contexts are not de-duplicated here."""
    if not (config.user_cap_day or config.user_cap_total) or not len(user):
        return None
    no_user = user == NO_USER
    own = np.where(no_user, int(user.max()) + 1 + np.arange(len(user)), user)
    return influence_weights(
        own,
        np.zeros(len(user), dtype=np.int64) if day is None else day,
        cap_day=config.user_cap_day or None,
        cap_total=config.user_cap_total or None,
    )


def _total(counts: GroupedCounts) -> int:
    return int(counts.count.sum())
