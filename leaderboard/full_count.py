"""Every battle counted at once, in memory: the rebuild and the reconciliation of the count tables.

PostgreSQL's GROUPING SETS over ten million battles took ~70 s for the per-day cells alone
(one sort or hash per dimension, row by row), the per-user day rows another ~45 s. Here
PostgreSQL sends each non-excluded battle once, as seven integers packed by blocks of ids
(core/pgcopy.py): id, UTC day, models, outcome, a 64-bit hash of its slice values (kind,
language, task type, context bucket, natural language, simulated or not) and its user key.
The few distinct slice combinations are then named from one battle each, in the same
snapshot; numpy counts the battles by every key the tables hold (analysis/key_counts.py),
and binary COPYs write the rows back. Figures in docs/scaling.md ("Rebuilding the counts").

The process doing it holds about 180 bytes per battle at its peak (1.8 GB at 10M battles);
above ARENA_REBUILD_IN_MEMORY_MAX_BATTLES the tables are counted in SQL instead
(leaderboard/incremental.py), slower but in the database's own memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import connection, models

from analysis.key_counts import count_by, dense_codes
from core.pgcopy import read_ints, write_rows
from ingest.models import Battle

from .models import CellTotal, DayCell, DayUserCell, UserCellTotal, UserGroupCellTotal, UserTotal

DIMS = ("kind", "language", "task_type", "context_bucket", "natural_language")
ALL, SOURCE = "all", "source"  # the overall counts; simulated vs other battles
# A battle's user as a 64-bit integer (see DayUserCell.user_key): PostgreSQL's own hash,
# 4x cheaper than an md5 here.
USER_KEY = "hashtextextended(user_hash, 0)"
# Fixed groups of users (GroupedCounts.users_in_groups): group = user key mod GROUPS, kept in
# UserGroupCellTotal. The clustered intervals use them at ARENA_MAX_USER_CLUSTERS = GROUPS (the
# default); another setting groups the per-user totals when they are read.
GROUPS = 4096
SOURCE_VALUE = "(CASE WHEN source = 'simulated' THEN 'simulated' ELSE 'other' END)"

_BATTLE = Battle._meta.db_table
_SLICES = f"ROW({', '.join(DIMS)}, {SOURCE_VALUE})"
# What is read of each non-excluded battle: id, UTC day (days since 2000-01-01), models,
# outcome, the hash of its slice values, its user key.
_READ = (
    ("id", "int8"),
    ("(received_at AT TIME ZONE 'UTC')::date - DATE '2000-01-01'", "int4"),
    ("model_a_id", "int4"),
    ("model_b_id", "int4"),
    ("outcome", "int2"),
    (f"hash_record_extended({_SLICES}, 0)", "int8"),
    (USER_KEY, "int8"),
)


class BattlesChanged(RuntimeError):
    """A battle used to name a slice combination changed between the two reads (possible
    only outside a REPEATABLE READ transaction); the count is to be run again."""


@dataclass(frozen=True)
class Battles:
    """The non-excluded battles, one array entry each, coded for count_by: day, model A,
    model B and outcome packed into one `cell` code (`pair`: the same without the day)."""

    days: np.ndarray  # the distinct days (days since 2000-01-01, PostgreSQL's own date)
    models: np.ndarray  # the distinct model ids
    outcomes: int  # outcome codes are 0 .. outcomes - 1
    cell: np.ndarray  # ((day * M + A) * M + B) * outcomes + outcome, with day, A, B coded
    pair: np.ndarray  # (A * M + B) * outcomes + outcome
    user: np.ndarray  # USER_KEY
    combo: np.ndarray  # index into combos
    combos: tuple[tuple[str, ...], ...]  # each slice combination's (*DIMS, source) values

    def __len__(self) -> int:
        return len(self.cell)

    @property
    def pairs(self) -> int:
        return len(self.models) ** 2 * self.outcomes

    @property
    def cells(self) -> int:
        return max(len(self.days) * self.pairs, 1)

    def split(self, pair: np.ndarray) -> dict[str, np.ndarray]:
        """Model A, model B and outcome of `pair` codes (as stored)."""
        m = len(self.models)
        ab, outcome = np.divmod(pair, self.outcomes)
        return {"model_a": self.models[ab // m], "model_b": self.models[ab % m], "outcome": outcome}

    def split_cell(self, cell: np.ndarray) -> dict[str, np.ndarray]:
        day, pair = np.divmod(cell, self.pairs)
        return {"day": self.days[day], **self.split(pair)}


@dataclass(frozen=True)
class Part:
    """Battles of one read as they came, with the names of their slice combinations."""

    day: np.ndarray
    model_a: np.ndarray
    model_b: np.ndarray
    outcome: np.ndarray
    slices: np.ndarray  # the hash of their slice values
    user: np.ndarray
    named: dict[int, tuple[str, ...]]  # slice hash -> (*DIMS, source) values


def read_part(cursor: Any, *, part: int = 0, parts: int = 1) -> Part:
    """The battles of every `parts`-th block of ids, from the `part`-th (core.pgcopy).
    Run in a REPEATABLE READ transaction,
    so the combinations are named in the snapshot they were read in (else BattlesChanged
    may be raised)."""
    ids, day, a, b, outcome, slices, user = read_ints(
        cursor.cursor, _BATTLE, _READ, "NOT excluded", part=part, parts=parts
    )
    hashes, first = np.unique(slices, return_index=True)
    cursor.execute(
        f"SELECT hash_record_extended({_SLICES}, 0), {', '.join(DIMS)}, {SOURCE_VALUE} "
        f"FROM {_BATTLE} WHERE id = ANY(%s)",
        [ids[first].tolist()],
    )
    named = {row[0]: tuple(row[1:]) for row in cursor.fetchall()}
    if not set(named) >= set(hashes.tolist()):
        raise BattlesChanged("battles changed while they were counted")
    return Part(day, a, b, outcome, slices, user, named)


def read(cursor: Any) -> Battles:
    return coded([read_part(cursor)])


def coded(parts: list[Part]) -> Battles:
    """The parts' battles together, coded for count_by."""

    def joined(column: str) -> np.ndarray:
        return np.concatenate([getattr(p, column) for p in parts])

    named = {h: v for p in parts for h, v in p.named.items()}
    hashes, combo = np.unique(joined("slices"), return_inverse=True)
    day, outcome = joined("day"), joined("outcome").astype(np.int64)
    n = len(day)
    days, day_code = dense_codes(day)
    models, model_code = dense_codes(np.concatenate([joined("model_a"), joined("model_b")]))
    outcomes = int(outcome.max()) + 1 if n else 1
    pair = (model_code[:n] * len(models) + model_code[n:]) * outcomes + outcome
    return Battles(
        days=days,
        models=models,
        outcomes=outcomes,
        cell=day_code * (len(models) ** 2 * outcomes) + pair,
        pair=pair,
        user=joined("user"),
        combo=combo.astype(np.int64).ravel(),
        combos=tuple(named[h] for h in hashes.tolist()),
    )


@dataclass(frozen=True)
class CellCounts:
    """Rows of DayCell and CellTotal, in blocks of one (dimension, value) each."""

    day_cells: list[dict]
    cells: list[dict]


@dataclass(frozen=True)
class UserCounts:
    """Rows of DayUserCell, UserTotal, UserGroupCellTotal and, if kept, UserCellTotal."""

    day_users: dict
    user_totals: dict
    group_cells: dict
    user_cells: dict | None

    @property
    def users(self) -> int:
        return len(self.user_totals["user_key"])


def count_cells(battles: Battles) -> CellCounts:
    day_cells: list[dict] = []
    cells: list[dict] = []
    for position, dimension in enumerate((*DIMS, SOURCE, ALL)):
        if dimension == ALL:
            values, code = [""], np.zeros(len(battles), dtype=np.int64)
        else:
            names = sorted({c[position] for c in battles.combos})
            index = {v: i for i, v in enumerate(names)}
            values = names
            code = np.array([index[c[position]] for c in battles.combos], dtype=np.int64)
            code = code[battles.combo]
        if not values:  # no battles
            continue
        for rows, by_cell in ((day_cells, True), (cells, False)):
            key, size = (battles.cell, battles.cells) if by_cell else (battles.pair, battles.pairs)
            (packed, value), count = count_by([key, code], [size, len(values)])
            split = battles.split_cell if by_cell else battles.split
            for i, name in enumerate(values):
                mask = value == i
                if mask.any():
                    rows.append(
                        {
                            "dimension": dimension,
                            "value": name,
                            **split(packed[mask]),
                            "count": count[mask],
                        }
                    )
    return CellCounts(day_cells, cells)


def count_users(battles: Battles, *, max_users_kept: int) -> UserCounts:
    """With the per-user totals if there are at most `max_users_kept` users (they are kept
    only for few users, see incremental._keeps_user_cells)."""
    users, user = dense_codes(battles.user)
    (cell, index), count = count_by([battles.cell, user], [battles.cells, max(len(users), 1)])
    day_users = {**battles.split_cell(cell), "user_key": users[index], "count": count}
    totals = {"user_key": users, "count": np.bincount(user, minlength=len(users))}
    (group, pair), count = count_by([(users % GROUPS)[user], battles.pair], [GROUPS, battles.pairs])
    group_cells = {"user_group": group, **battles.split(pair), "count": count}
    user_cells = None
    if len(users) <= max_users_kept:
        (index, pair), count = count_by([user, battles.pair], [max(len(users), 1), battles.pairs])
        user_cells = {"user_key": users[index], **battles.split(pair), "count": count}
    return UserCounts(day_users, totals, group_cells, user_cells)


def _types(model: type[models.Model], names: tuple[str, ...]) -> list[tuple[str, str]]:
    """(column, COPY type) of the model's fields, from their database types."""
    kinds = {"integer": "int4", "bigint": "int8", "smallint": "int2", "date": "date"}
    out = []
    for name in names:
        db_type = model._meta.get_field(name).db_type(connection=connection)
        out.append((name, kinds.get(str(db_type), "text")))
    return out


_CELL_COLUMNS = ("dimension", "value", "model_a", "model_b", "outcome", "count")
_USER_COLUMNS = ("user_key", "model_a", "model_b", "outcome", "count")
_GROUP_COLUMNS = ("user_group", "model_a", "model_b", "outcome", "count")


def write_cells(cursor: Any, counts: CellCounts) -> None:
    """Into the emptied DayCell and CellTotal."""
    write_rows(
        cursor.cursor,
        DayCell._meta.db_table,
        _types(DayCell, ("day", *_CELL_COLUMNS)),
        counts.day_cells,
    )
    write_rows(
        cursor.cursor, CellTotal._meta.db_table, _types(CellTotal, _CELL_COLUMNS), counts.cells
    )


def write_users(cursor: Any, counts: UserCounts) -> None:
    """Into the emptied DayUserCell, UserTotal, UserGroupCellTotal (and UserCellTotal)."""
    tables: list[tuple[type[models.Model], tuple[str, ...], dict | None]] = [
        (DayUserCell, ("day", *_USER_COLUMNS), counts.day_users),
        (UserTotal, ("user_key", "count"), counts.user_totals),
        (UserGroupCellTotal, _GROUP_COLUMNS, counts.group_cells),
        (UserCellTotal, _USER_COLUMNS, counts.user_cells),
    ]
    for model, columns, rows in tables:
        if rows is not None:
            write_rows(cursor.cursor, model._meta.db_table, _types(model, columns), [rows])


def _rows(blocks: list[dict], columns: tuple[str, ...]) -> Iterator[tuple]:
    for block in blocks:
        arrays = [block[c] if isinstance(block[c], np.ndarray) else None for c in columns]
        n = len(block["count"])
        for i in range(n):
            yield tuple(
                block[c] if a is None else int(a[i]) for c, a in zip(columns, arrays, strict=True)
            )


def _int_rows(rows: dict, columns: tuple[str, ...]) -> np.ndarray:
    """Rows as one value each (a byte string of the row's int64s), to compare as sets."""
    table = np.ascontiguousarray(
        np.stack([np.asarray(rows[c], dtype=np.int64) for c in columns], axis=1)
    )
    return table.view(np.dtype((np.void, 8 * len(columns)))).ravel()


def _differ(mine: np.ndarray, truth: np.ndarray) -> int:
    """Rows in one and not the other (EXCEPT ALL both ways; rows are unique in each)."""
    return len(mine) + len(truth) - 2 * len(np.intersect1d(mine, truth))


def mismatches(cursor: Any, cells: CellCounts, users: UserCounts) -> int:
    """Rows of the maintained totals (CellTotal, UserTotal, UserGroupCellTotal, and
    UserCellTotal when given) that differ from these counts, either way."""
    cursor.execute(f"SELECT {', '.join(_CELL_COLUMNS)} FROM {CellTotal._meta.db_table}")
    mine = set(cursor.fetchall())
    truth = set(_rows(cells.cells, _CELL_COLUMNS))
    differ = len(mine ^ truth)
    tables: list[tuple[type[models.Model], tuple[str, ...], dict | None]] = [
        (UserTotal, ("user_key", "count"), users.user_totals),
        (UserGroupCellTotal, _GROUP_COLUMNS, users.group_cells),
        (UserCellTotal, _USER_COLUMNS, users.user_cells),
    ]
    for model, columns, rows in tables:
        if rows is None:
            continue
        stored = read_ints(cursor.cursor, model._meta.db_table, _types(model, columns))
        differ += _differ(
            _int_rows(dict(zip(columns, stored, strict=True)), columns), _int_rows(rows, columns)
        )
    return differ
