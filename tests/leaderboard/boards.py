"""Hand-made published snapshots for page tests that need exact boards (no fit)."""

from __future__ import annotations

import datetime as dt

from catalogue.models import ArenaModel
from leaderboard import selectors
from leaderboard.models import Snapshot, SnapshotRow, SnapshotSlice


def add_board(
    snap: Snapshot,
    *,
    key: str,
    ratings: dict[ArenaModel, float],
    public: bool = True,
) -> SnapshotSlice:
    """One board of `snap`: "overall" or "<dimension>:<value>", its models with a rating."""
    dimension, _, value = key.partition(":")
    models = list(ratings)
    k = len(models)
    slice_ = SnapshotSlice.objects.create(
        snapshot=snap,
        key=key,
        dimension=dimension,
        value=value,
        battles=100,
        models_order=[m.key for m in models],
        matrices={
            "win_fraction": [[0.5] * k for _ in range(k)],
            "battle_count": [[10] * k for _ in range(k)],
            "predicted_win_rate": [[0.5] * k for _ in range(k)],
        },
    )
    for m, rating in ratings.items():
        SnapshotRow.objects.create(
            slice=slice_,
            model=m,
            public=public,
            rating=rating,
            ci_lower=rating - 10,
            ci_upper=rating + 10,
            rank=1,
            votes=50,
            avg_win_rate=0.5,
            status="ok",
        )
    return slice_


def publish_board(
    *,
    at: dt.datetime,
    models: list[ArenaModel],
    public: bool = True,
    boards: dict[str, dict[ArenaModel, float]] | None = None,
) -> Snapshot:
    """A published snapshot whose overall board shows `models` (ratings 1000, 1001, ...),
    plus the slice `boards` given (key -> model -> rating)."""
    snap = Snapshot.objects.create(
        status=Snapshot.Status.PUBLISHED, computed_at=at, method="bootstrap"
    )
    add_board(
        snap, key="overall", ratings={m: 1000.0 + i for i, m in enumerate(models)}, public=public
    )
    for key, ratings in (boards or {}).items():
        add_board(snap, key=key, ratings=ratings)
    selectors.snapshot_published(snap.pk)
    return snap
