"""Aggregation of battles into the count cells the rating engine reads.

The cells are counts by (model A, model B, outcome, and every slice dimension); each slice
is then a sum over those cells in numpy, whatever the number of slices. On PostgreSQL they
come from counts maintained day by day (incremental.py), so a recompute's database work
depends on what changed since the last one, not on the arena's history; on SQLite (the
embedded demo) one GROUP BY over the battles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.db import connection
from numpy.typing import ArrayLike

from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE, GroupedCounts
from catalogue.selectors import merge_targets
from ingest.models import Battle, Outcome

from . import incremental
from .count_tables import ALL, SOURCE

# Slice dimensions: battle column -> label shown on the pages.
DIMENSIONS: dict[str, str] = {
    "kind": "Completion vs edit",
    "language": "Programming language",
    "task_type": "Task type",
    "context_bucket": "Context length",
    "natural_language": "Natural language",
}
_ENGINE_OUTCOME = {
    Outcome.A: OUTCOME_A,
    Outcome.B: OUTCOME_B,
    Outcome.TIE: OUTCOME_TIE,
    Outcome.BOTH_BAD: OUTCOME_TIE,
}


@dataclass(frozen=True)
class BattleCells:
    """Battle counts per (A, B, outcome): the overall ones (dimension "all") and, for each
    slice dimension, per value. Model ids, engine outcome codes; a key may repeat (its
    counts add up)."""

    model_a: np.ndarray
    model_b: np.ndarray
    outcome: np.ndarray
    count: np.ndarray
    dimension: np.ndarray
    value: np.ndarray
    users: int
    simulated: int
    userless: int = 0  # battles stored without a user id (each its own cluster)

    @property
    def battles(self) -> int:
        return int(self.count[self.dimension == ALL].sum())

    def values(self, dimension: str) -> list[str]:
        return sorted(set(self.value[self.dimension == dimension].tolist()))

    def mask(self, dimension: str, value: str | None = None) -> np.ndarray:
        """The cells of one slice (`dimension`, `value`), or of the overall board (ALL)."""
        mask: np.ndarray = self.dimension == dimension
        return mask if value is None else mask & (self.value == value)

    def grouped(
        self, mask: np.ndarray | None, keys: dict[int, str], *, min_votes: int = 1
    ) -> GroupedCounts:
        """Engine input for the cells under `mask` (the overall board's when None), models
        named by key.

        Models with fewer than `min_votes` battles in these cells are left out together
        with their battles: they are not shown, and a barely measured model would widen
        every other interval through the mean-rating constraint.
        """
        mask = self.mask(ALL) if mask is None else mask
        a, b, o, c = self.model_a[mask], self.model_b[mask], self.outcome[mask], self.count[mask]
        ids, inverse = np.unique(np.concatenate([a, b]), return_inverse=True)
        ia, ib = inverse[: len(a)], inverse[len(a) :]
        votes = np.bincount(ia, weights=c, minlength=len(ids)) + np.bincount(
            ib, weights=c, minlength=len(ids)
        )
        keep = votes >= min_votes
        if not keep.all():
            rows = keep[ia] & keep[ib]
            ia, ib, o, c = ia[rows], ib[rows], o[rows], c[rows]
            new_index = np.cumsum(keep) - 1
            ia, ib, ids = new_index[ia], new_index[ib], ids[keep]
        return GroupedCounts(
            models=tuple(keys[int(m)] for m in ids), a=ia, b=ib, outcome=o, count=c
        )


def cells_from_combinations(
    a: np.ndarray,
    b: np.ndarray,
    outcome: np.ndarray,
    count: np.ndarray,
    dims: dict[str, np.ndarray],
    *,
    users: int,
    simulated: int,
    userless: int = 0,
) -> BattleCells:
    """BattleCells from counts per combination of every dimension's value (stored outcome
    codes, raw model ids): each row counts once overall and once for each dimension."""
    a, b = _merged(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
    keep = a != b
    a, b = a[keep], b[keep]
    o, c = _engine_outcomes(tuple(outcome))[keep], np.asarray(count, dtype=np.int64)[keep]
    n, parts = len(a), [ALL, *dims]
    return BattleCells(
        model_a=np.tile(a, len(parts)),
        model_b=np.tile(b, len(parts)),
        outcome=np.tile(o, len(parts)),
        count=np.tile(c, len(parts)),
        dimension=np.repeat(np.array(parts, dtype=object), n),
        value=np.concatenate(
            [np.full(n, "", dtype=object)] + [np.asarray(dims[d], dtype=object)[keep] for d in dims]
        ),
        users=users,
        simulated=simulated,
        userless=userless,
    )


def _engine_outcomes(stored: ArrayLike) -> np.ndarray:
    """Stored outcome codes as the engine's (both-bad counts as a tie)."""
    outcome_map = np.zeros(max(_ENGINE_OUTCOME) + 1, dtype=np.int64)
    for ours, engine in _ENGINE_OUTCOME.items():
        outcome_map[ours] = engine
    return outcome_map[np.array(stored, dtype=np.int64)]


def _lookup(mapping: dict[int, int], ids: np.ndarray, *, default: int | None = None) -> np.ndarray:
    """`mapping[id]` for each model id (`default`, or the id itself, where absent), as one
    array index: model ids are small integers, and a per-element Python call cost seconds
    on a million rows."""
    if not len(ids):
        return ids
    size = int(max(ids.max(), max(mapping, default=0))) + 1
    table = np.arange(size, dtype=np.int64) if default is None else np.full(size, default)
    if mapping:
        table[np.fromiter(mapping, dtype=np.int64)] = np.fromiter(mapping.values(), dtype=np.int64)
    looked_up: np.ndarray = table[ids]
    return looked_up


def _merged(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Model ids with merged keys counted for their target model. A battle between the two
    becomes a self-battle and carries no information: callers drop it."""
    target = merge_targets()
    if not len(a) or not target:
        return a, b
    return _lookup(target, a), _lookup(target, b)


def on_board(
    overall: GroupedCounts, keys: dict[int, str], model_a: ArrayLike, model_b: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stored model ids as indices into `overall` (merges applied; -1 for a model not on
    it, e.g. under the vote minimum), and which rows to keep: both on it, and not a battle
    of two keys of one model."""
    a, b = _merged(np.asarray(model_a, dtype=np.int64), np.asarray(model_b, dtype=np.int64))
    position = {pk: overall.models.index(key) for pk, key in keys.items() if key in overall.models}
    ia, ib = _lookup(position, a, default=-1), _lookup(position, b, default=-1)
    return ia, ib, (ia >= 0) & (ib >= 0) & (ia != ib)


def user_indices(keys: ArrayLike) -> np.ndarray:
    """User keys (or hashes) as dense indices 0..n-1, in key order."""
    users = np.asarray(keys)
    if users.dtype.kind in "iu" and len(users) and users.min() >= 0 and users.max() < len(users):
        # small integer keys (the 4,096 user groups over ~1M rows): ranks without a sort
        present = np.zeros(int(users.max()) + 1, dtype=np.int64)
        present[users] = 1
        if present.all():  # the keys are their own ranks (every group has battles)
            return users.astype(np.int64, copy=False)
        return np.asarray((np.cumsum(present) - 1)[users])
    _, index = np.unique(users, return_inverse=True)
    return np.asarray(index, dtype=np.int64).ravel()


def _scan_battles() -> BattleCells:
    """The cells straight from the battles (the embedded SQLite mode)."""
    table = Battle._meta.db_table
    columns = ", ".join(DIMENSIONS)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT model_a_id, model_b_id, outcome, {columns}, COUNT(*) FROM {table} "
            f"WHERE NOT excluded GROUP BY model_a_id, model_b_id, outcome, {columns}"
        )
        rows = cursor.fetchall()
        cursor.execute(
            f"SELECT model_a_id, model_b_id, COUNT(*) FROM {table} "
            f"WHERE NOT excluded AND source = 'simulated' GROUP BY model_a_id, model_b_id"
        )
        sim = cursor.fetchall()
        cursor.execute(
            f"SELECT COUNT(DISTINCT user_hash) FROM {table} WHERE NOT excluded AND user_hash <> ''"
        )
        (users,) = cursor.fetchone()
        cursor.execute(
            f"SELECT model_a_id, model_b_id, COUNT(*) FROM {table} "
            f"WHERE NOT excluded AND user_hash = '' GROUP BY model_a_id, model_b_id"
        )
        userless = cursor.fetchall()
    cols = list(zip(*rows, strict=True)) if rows else [()] * (4 + len(DIMENSIONS))
    return cells_from_combinations(
        np.array(cols[0], dtype=np.int64),
        np.array(cols[1], dtype=np.int64),
        np.array(cols[2], dtype=np.int64),
        np.array(cols[-1], dtype=np.int64),
        {d: np.array(cols[3 + i], dtype=object) for i, d in enumerate(DIMENSIONS)},
        users=int(users or 0),
        simulated=_on_boards(sim),
        userless=_on_boards(userless),
    )


def _on_boards(rows: Sequence[tuple[int, ...]]) -> int:
    """Battles of rows (A, B, ..., count) that are on some board: after merges, not between
    two keys of one model (the basis of BattleCells.battles)."""
    a, b = _merged(
        np.array([r[0] for r in rows], dtype=np.int64),
        np.array([r[1] for r in rows], dtype=np.int64),
    )
    return int(sum(r[-1] for r, x, y in zip(rows, a, b, strict=True) if x != y))


def _maintained() -> BattleCells:
    rows, users = incremental.read_cells()
    cols = list(zip(*rows, strict=True)) if rows else [()] * 6
    dimension = np.array(cols[0], dtype=object)
    value = np.array(cols[1], dtype=object)
    count = np.array(cols[5], dtype=np.int64)
    a, b = _merged(np.array(cols[2], dtype=np.int64), np.array(cols[3], dtype=np.int64))
    # counted on the board's basis: a battle between two keys of one model is on no board
    sim = (dimension == SOURCE) & (value == "simulated") & (a != b)
    simulated = int(count[sim].sum())
    keep = (a != b) & (dimension != SOURCE)
    return BattleCells(
        model_a=a[keep],
        model_b=b[keep],
        outcome=_engine_outcomes(cols[4])[keep],
        count=count[keep],
        dimension=dimension[keep],
        value=value[keep],
        users=users,
        simulated=simulated,
        userless=_on_boards(incremental.read_userless_cells()),
    )


def aggregate(*, full: bool = False) -> BattleCells:
    """The count cells of every non-excluded battle.

    On PostgreSQL from the maintained per-day counts (leaderboard/incremental.py), brought
    up to date first -- only the days that changed are counted again, unless `full`.
    """
    if not incremental.enabled():
        return _scan_battles()
    incremental.refresh(full=full)
    return _maintained()


def overall_by_user(
    overall: GroupedCounts, keys: dict[int, str], *, groups: int | None = None
) -> GroupedCounts:
    """The overall board's counts split by user, for user-clustered intervals.

    The same battles as `overall` (merges remapped, self-battles and models left out of
    `overall` dropped), one row per (user, A, B, outcome): summed over users they are
    `overall`'s counts, so the ratings are the same and only the intervals change. Read from
    the per-user totals that `aggregate` refreshed (a GROUP BY over the battles on SQLite);
    the slices' boards keep independent-vote intervals. `groups`: users summed into that
    many groups by their key already in SQL (on PostgreSQL; the fit groups the rest).
    Battles without a user are independent votes (GroupedCounts.independent_user).
    """
    cols: Sequence[ArrayLike]
    userless: object = ""
    if incremental.enabled():
        # users as integers (DayUserCell.user_key), or their groups; as arrays
        cols = incremental.read_user_cell_arrays(groups=groups)
        with connection.cursor() as cursor:
            userless = incremental.userless_key(cursor)
        if groups is not None:
            cols = _userless_out_of_groups(cols, groups, int(userless))
            userless = groups
    else:
        table = Battle._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT user_hash, model_a_id, model_b_id, outcome, COUNT(*) FROM {table} "
                f"WHERE NOT excluded GROUP BY user_hash, model_a_id, model_b_id, outcome"
            )
            rows = cursor.fetchall()
        cols = list(zip(*rows, strict=True)) if rows else [()] * 5
    ia, ib, keep = on_board(overall, keys, cols[1], cols[2])
    users = np.asarray(cols[0], dtype=np.int64 if incremental.enabled() else object)
    # Usually every row is on the board: no copies then (a million rows of the user groups)
    kept: slice | np.ndarray = slice(None) if keep.all() else keep
    index = user_indices(users[kept])
    counts = GroupedCounts(
        models=overall.models,
        a=ia[kept],
        b=ib[kept],
        outcome=_engine_outcomes(cols[3])[kept],
        count=np.asarray(cols[4], dtype=np.int64)[kept],
        positions_known=overall.positions_known,
        user=index,
    )
    return with_userless_apart(counts, index[users[kept] == userless], groups=groups)


def with_userless_apart(
    counts: GroupedCounts, userless_index: np.ndarray, *, groups: int | None = None
) -> GroupedCounts:
    """`counts` with the user-less battles (their user index, if any row has it) as
    independent votes."""
    if not len(userless_index):
        return counts
    return counts.independent_user(int(userless_index[0]), groups=groups)


def _userless_out_of_groups(
    cols: tuple[np.ndarray, ...], groups: int, key: int
) -> tuple[np.ndarray, ...]:
    """The fixed groups' rows with the user-less battles taken out of their group (the one
    of their key) and added as the rows of a group of their own, numbered `groups`."""
    cells = incremental.read_userless_cells()
    if not cells:
        return cols
    user, a, b, outcome, count = cols
    extra = np.array(cells, dtype=np.int64).reshape(len(cells), 4)
    count = np.array(count, dtype=np.int64)  # the columns may be the shared group cache's
    home = np.flatnonzero(user == key % groups)
    row = {(int(a[i]), int(b[i]), int(outcome[i])): i for i in home}
    for x, y, z, n in extra.tolist():
        count[row[(x, y, z)]] -= n
    return (
        np.concatenate([user, np.full(len(extra), groups, dtype=np.int64)]),
        np.concatenate([a, extra[:, 0]]),
        np.concatenate([b, extra[:, 1]]),
        np.concatenate([outcome, extra[:, 2]]),
        np.concatenate([count, extra[:, 3]]),
    )
