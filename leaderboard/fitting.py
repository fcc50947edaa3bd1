"""One board's fit with the arena's settings: what the recompute and the fan-out workers run."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from analysis.grouping import GroupedCounts
from analysis.leaderboard import Leaderboard, compute_leaderboard


@dataclass(frozen=True)
class FitSettings:
    """What every board of one recompute shares (from RatingConfig and the catalogue)."""

    anchor: str | None
    anchor_value: float
    method: str
    seed: int
    shown: tuple[str, ...]
    # Clustered intervals resample users in at most this many groups (settings.py).
    max_clusters: int | None = None


def fit_board(
    counts: GroupedCounts,
    *,
    settings: FitSettings,
    rounds: int,
    position_bias: bool = False,
    robustness_places: int = 0,
    users: int | None = None,
) -> Leaderboard:
    anchor = settings.anchor
    present = anchor in counts.models
    board = compute_leaderboard(
        counts,
        rounds=rounds,
        anchor=anchor if present else None,
        position_bias=position_bias,
        method=settings.method,  # type: ignore[arg-type]  # RatingConfig's choices
        seed=settings.seed,
        anchor_value=settings.anchor_value,
        shown=list(settings.shown),
        robustness_places=robustness_places,
        max_clusters=settings.max_clusters,
        users=users,
    )
    if anchor is not None and not present:
        # No battles of the anchor here: say so, as the engine does for an unrated one.
        board = dataclasses.replace(
            board, anchor=anchor, scale_label=f"{board.scale_label} ({anchor} is not rated here)"
        )
    return board
