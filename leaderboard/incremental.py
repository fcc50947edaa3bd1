"""Battle counts kept up to date day by day, so a recompute does not scan every battle.

PostgreSQL only (the embedded SQLite mode aggregates all battles each time, see
aggregation.py). Four tables hold the counts (leaderboard/models.py): per UTC day
(`DayCell`, `DayUserCell`) and their sums over all days (`CellTotal`, `UserCellTotal`),
which is what a recompute reads. A trigger on the battle table appends, for every statement
that inserts, changes or deletes battles, the days it touched to `BattleMark` (migration
0012), in the writer's own transaction.

`refresh()` re-aggregates only the marked days: it deletes the marks it can see (those of
committed transactions), counts their days again from the battles and adds to the totals
the difference between the new and the stored day counts, all in one transaction. A mark it cannot see yet (its transaction still open) is not deleted and is
read by the next refresh; the battles are counted after the marks are read, so they include
everything those marks stand for (a day counted twice changes nothing). If the refresh
fails, its deletion of the marks is rolled back with it. No vote waits for a refresh: marks
are plain appends with no unique index, and only refreshes write the count tables (one at a
time, under a row lock on `AggregationState`). The count tables are UNLOGGED (derived data;
a crash or failover empties them and the next refresh rebuilds them).

Per-user totals (`UserCellTotal`) are kept only while the arena has at most
ARENA_MAX_USER_CLUSTERS users, whose clustered intervals resample them one by one; above
that the intervals read users in fixed groups (`UserGroupCellTotal`), the per-user totals
are emptied and reads of per-user cells sum the per-day rows. What a refresh does is then
bounded by the votes it counts, not by the millions of per-user rows of a large arena.

`refresh(full=True)` recounts everything; `reconcile()` (nightly) compares the maintained totals
with a full GROUP BY over the battles in one snapshot, logs a mismatch as an error and lets
the full count win.
"""

from __future__ import annotations

import logging
import re
import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from ingest.models import Battle

from . import full_count, group_cache
from .full_count import ALL, DIMS, GROUPS, SOURCE, SOURCE_VALUE, USER_KEY
from .models import (
    AggregationState,
    BattleMark,
    CellTotal,
    DayCell,
    DayUserCell,
    UserCellTotal,
    UserGroupCellTotal,
    UserTotal,
)

log = logging.getLogger(__name__)
# A rebuild reads the battles over this many connections at once (one core each for
# PostgreSQL's packing of the rows); one waits at most this long for the others to share its
# snapshot.
READERS = 2
READ_SETUP_SECONDS = 120

_BATTLE = Battle._meta.db_table
_DAY = "(received_at AT TIME ZONE 'UTC')::date"
USER_GROUP = f"MOD(MOD(user_key, {GROUPS}) + {GROUPS}, {GROUPS})"


@dataclass(frozen=True)
class Refresh:
    days: tuple[date, ...]  # the days counted again (none after a full rebuild)
    full: bool
    mismatched: int = 0  # reconcile only: total cells that differed


@dataclass(frozen=True)
class _Rollup:
    """Totals by fewer or coarser keys, kept alongside: `keys` are its columns, `exprs` what
    they hold in terms of the finer table's columns (the same names unless given)."""

    table: str
    keys: tuple[str, ...]
    exprs: tuple[str, ...] = ()
    cached: bool = False  # its changed rows are handed to group_cache

    @property
    def columns(self) -> str:
        return ", ".join(self.keys)

    @property
    def select(self) -> str:
        return ", ".join(self.exprs or self.keys)


@dataclass(frozen=True)
class _Table:
    day_table: str
    total_table: str
    keys: tuple[str, ...]
    # The number of distinct users is a COUNT(*) of UserTotal, not a COUNT(DISTINCT) over
    # millions of per-user cells; the clustered intervals of a large arena read the users in
    # GROUPS fixed groups (UserGroupCellTotal), not millions of per-user rows.
    rollups: tuple[_Rollup, ...] = ()
    per_user: bool = False  # the per-user cells (UserCellTotal kept only for few users)

    @property
    def columns(self) -> str:
        return ", ".join(self.keys)

    def count_sql(self, where: str, *, by_day: bool) -> str:
        """SELECT [day,] keys, count FROM the battles under `where` (non-excluded only)."""
        raise NotImplementedError


class _Cells(_Table):
    def count_sql(self, where: str, *, by_day: bool) -> str:
        # One scan for every dimension at once: GROUPING SETS gives one group per value of
        # each dimension (the others NULL in it) and () the overall counts.
        sets = [*DIMS, SOURCE_VALUE]
        names = [*DIMS, SOURCE]
        which = " ".join(
            f"WHEN GROUPING({e}) = 0 THEN '{n}'" for e, n in zip(sets, names, strict=True)
        )
        day = f"{_DAY}, " if by_day else ""
        return (
            f"SELECT {day}CASE {which} ELSE '{ALL}' END, COALESCE({', '.join(sets)}, ''), "
            f"model_a_id, model_b_id, outcome, COUNT(*) FROM {_BATTLE} "
            f"WHERE NOT excluded AND {where} GROUP BY {day}model_a_id, model_b_id, outcome, "
            f"GROUPING SETS ({', '.join(f'({e})' for e in sets)}, ())"
        )


class _Users(_Table):
    def count_sql(self, where: str, *, by_day: bool) -> str:
        day = f"{_DAY}, " if by_day else ""
        cols = f"{USER_KEY}, model_a_id, model_b_id, outcome"
        return (
            f"SELECT {day}{cols}, COUNT(*) FROM {_BATTLE} WHERE NOT excluded AND {where} "
            f"GROUP BY {day}{cols}"
        )


CELLS = _Cells(
    DayCell._meta.db_table,
    CellTotal._meta.db_table,
    ("dimension", "value", "model_a", "model_b", "outcome"),
)
USERS = _Users(
    DayUserCell._meta.db_table,
    UserCellTotal._meta.db_table,
    ("user_key", "model_a", "model_b", "outcome"),
    rollups=(
        _Rollup(UserTotal._meta.db_table, ("user_key",)),
        _Rollup(
            UserGroupCellTotal._meta.db_table,
            ("user_group", "model_a", "model_b", "outcome"),
            (USER_GROUP, "model_a", "model_b", "outcome"),
            cached=True,
        ),
    ),
    per_user=True,
)


def enabled() -> bool:
    return connection.vendor == "postgresql"


def _state() -> AggregationState:
    AggregationState.objects.get_or_create(pk=1)
    return AggregationState.objects.select_for_update().get(pk=1)


def _day_ranges(days: list[date]) -> tuple[str, list[datetime]]:
    """A WHERE clause on received_at for the UTC days (consecutive days as one range), so
    the battles are found through the received_at index, not by a scan."""
    runs: list[list[date]] = []
    for d in sorted(days):
        if runs and (d - runs[-1][1]).days == 1:
            runs[-1][1] = d
        else:
            runs.append([d, d])
    params: list[datetime] = []
    for first, last in runs:
        params += [
            datetime.combine(first, time.min, tzinfo=UTC),
            datetime.combine(last + timedelta(days=1), time.min, tzinfo=UTC),
        ]
    clause = " OR ".join(["(received_at >= %s AND received_at < %s)"] * len(runs))
    return f"({clause})", params


def _count_days(cursor, table: _Table, days: list[date]) -> list[tuple]:
    """Replace the counts of `days` by a fresh count of their battles, totals adjusted.

    Only the difference reaches the totals: the fresh count goes to a temporary table, the
    fresh count minus the stored one (where they differ) to another, and each total gets
    that difference summed by its keys. A day that gained 10,000 votes touches the totals'
    keys of those votes, not every key of the day twice (taking it off, then adding it
    back), which on a 7.7M-row per-user table was most of a refresh. Returns the rows
    the cached rollup (group_cache) now has where it changed (count 0: deleted)."""
    if not days:
        return []
    where, params = _day_ranges(days)
    fresh, delta = f"fresh_{table.day_table}", f"delta_{table.day_table}"
    cursor.execute(
        f"CREATE TEMPORARY TABLE {fresh} (day, {table.columns}, count) ON COMMIT DROP AS "
        f"{table.count_sql(where, by_day=True)}",
        params,
    )
    cursor.execute(
        f"CREATE TEMPORARY TABLE {delta} ({table.columns}, count) ON COMMIT DROP AS "
        f"SELECT {table.columns}, SUM(d) FROM (SELECT {table.columns}, count AS d FROM {fresh} "
        f"UNION ALL SELECT {table.columns}, -count FROM {table.day_table} WHERE day = ANY(%s)"
        f") AS d GROUP BY {table.columns} HAVING SUM(d) <> 0",
        [days],
    )
    changed: list[tuple] = []
    for rollup in table.rollups:
        changed += _add(cursor, rollup, delta)
    for total in _own_total(cursor, table):  # after the rollups: it counts the users
        _add(cursor, total, delta)
    cursor.execute(f"DELETE FROM {table.day_table} WHERE day = ANY(%s)", [days])
    cursor.execute(
        f"INSERT INTO {table.day_table} (day, {table.columns}, count) "
        f"SELECT day, {table.columns}, count FROM {fresh}"
    )
    cursor.execute(f"DROP TABLE {fresh}, {delta}")
    if table.per_user and not _state().user_cells_current and _keeps_user_cells(cursor):
        _rebuild_user_cells(cursor)
    return changed


def _add(cursor, total: _Rollup, delta: str) -> list[tuple]:
    """Add the differences in table `delta` (the finer keys) to `total`, by its keys; for a
    cached total, the rows it changed with their new counts."""
    cols, sel = total.columns, total.select
    cursor.execute(
        f"INSERT INTO {total.table} ({cols}, count) SELECT {sel}, SUM(count) FROM {delta} "
        f"GROUP BY {sel} HAVING SUM(count) <> 0 "
        f"ON CONFLICT ({cols}) DO UPDATE SET count = {total.table}.count + EXCLUDED.count"
        + (f" RETURNING {cols}, {total.table}.count" if total.cached else "")
    )
    changed = cursor.fetchall() if total.cached else []
    cursor.execute(f"DELETE FROM {total.table} WHERE count = 0")
    return changed


def _own_total(cursor, table: _Table) -> tuple[_Rollup, ...]:
    """The table's sum over all days, where it is kept: always for the cells; for the
    per-user cells only while they are current and the arena's users few enough to be
    resampled one by one (else they are emptied and marked out of date, see
    `_keeps_user_cells`). Called after the rollups, so UserTotal already counts the users."""
    own = _Rollup(table.total_table, table.keys)
    if not table.per_user:
        return (own,)
    state = _state()
    if not state.user_cells_current:
        return ()
    if _keeps_user_cells(cursor):
        return (own,)
    cursor.execute(f"TRUNCATE {table.total_table}")
    state.user_cells_current = False
    state.save(update_fields=["user_cells_current"])
    return ()


def _keeps_user_cells(cursor) -> bool:
    """Per-user totals are kept only while the clustered intervals resample users one by
    one (at most ARENA_MAX_USER_CLUSTERS users). A larger arena's intervals read the users in
    fixed groups (UserGroupCellTotal); keeping millions of per-user rows up to date as well
    was the part of a refresh that grew with the arena. Readers of per-user cells when they
    are not kept sum the per-day rows instead (`_user_cells_sql`)."""
    cursor.execute(f"SELECT COUNT(*) FROM {UserTotal._meta.db_table}")
    return int(cursor.fetchone()[0]) <= settings.ARENA_MAX_USER_CLUSTERS


def _rebuild_user_cells(cursor) -> None:
    """UserCellTotal from the per-day rows (the arena has become small enough to keep it)."""
    cursor.execute(f"TRUNCATE {USERS.total_table}")
    _fill_user_cells(cursor)
    state = _state()
    state.user_cells_current = True
    state.save(update_fields=["user_cells_current"])


def _fill_user_cells(cursor) -> None:
    cursor.execute(
        f"INSERT INTO {USERS.total_table} ({USERS.columns}, count) "
        f"SELECT {USERS.columns}, SUM(count) FROM {USERS.day_table} GROUP BY {USERS.columns} "
        f"ORDER BY {USERS.columns}"
    )


def _truncate(cursor, table: _Table) -> None:
    tables = [table.day_table, table.total_table, *(r.table for r in table.rollups)]
    cursor.execute(f"TRUNCATE {', '.join(tables)}")


def _in_memory(cursor) -> bool:
    """Whether a rebuild counts the battles in this process (full_count) rather than in
    SQL: below ARENA_REBUILD_IN_MEMORY_MAX_BATTLES (by the planner's estimate; -1 when
    never analysed)."""
    cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [_BATTLE])
    estimate = max(float(cursor.fetchone()[0]), 0.0)
    return estimate < settings.ARENA_REBUILD_IN_MEMORY_MAX_BATTLES


def _rebuild(cursor, *, alone: bool) -> bool:
    """Every count table filled again from the battles; whether the per-user totals are
    kept (see `_keeps_user_cells`).

    `alone` (refresh() is not inside a caller's transaction): the users' tables are read,
    counted and written on a second connection while this one does the cells', so the two
    halves of the work take one core each. Safe in two transactions: the marks this refresh
    deleted were read before either count began, so both see every battle those marks stand
    for; whichever commits while the other fails has counted days that stay marked, and the
    next refresh counts them again (a day counted twice changes nothing).
    """
    if not _in_memory(cursor):
        return _rebuild_in_sql(cursor)
    if not alone:  # in the caller's snapshot, which a second connection could not see
        battles = full_count.read(cursor)
        _write_cells(cursor, battles)
        return _write_users(cursor, battles)
    with ThreadPoolExecutor(max_workers=READERS) as pool:
        battles = _read_in_parts(pool)
        users = pool.submit(_on_own_connection, _write_users, battles)
        _write_cells(cursor, battles)
        return users.result()


def _on_own_connection(work, *args):
    """`work(cursor, *args)` in a transaction of this thread's own connection, closed after."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            return work(cursor, *args)
    finally:
        connection.close()


def _read_in_parts(pool: ThreadPoolExecutor) -> full_count.Battles:
    """The battles read by READERS connections at once, each every READERS-th block of ids
    (PostgreSQL packs a connection's rows on one core), all in the first one's snapshot."""
    snapshot: Future[str] = Future()
    imported = threading.Barrier(READERS, timeout=READ_SETUP_SECONDS)
    parts = [
        pool.submit(_on_own_connection, _read_part, part, snapshot, imported)
        for part in range(READERS)
    ]
    return full_count.coded([p.result() for p in parts])


def _read_part(cursor, part: int, snapshot: Future[str], imported: threading.Barrier):
    cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
    try:
        if part == 0:
            cursor.execute("SELECT pg_export_snapshot()")
            snapshot.set_result(cursor.fetchone()[0])
        else:
            exported = snapshot.result(READ_SETUP_SECONDS)
            if not re.fullmatch(r"[0-9A-F-]+", exported):  # SET takes no bound parameter
                raise ValueError(f"unexpected snapshot id {exported!r}")
            cursor.execute(f"SET TRANSACTION SNAPSHOT '{exported}'")
        imported.wait()  # the exporting transaction must stay open until every import
    except BaseException as exc:
        if not snapshot.done():
            snapshot.set_exception(exc)
        imported.abort()
        raise
    return full_count.read_part(cursor, part=part, parts=READERS)


def _write_cells(cursor, battles: full_count.Battles) -> None:
    counts = full_count.count_cells(battles)
    _truncate(cursor, CELLS)
    full_count.write_cells(cursor, counts)


def _write_users(cursor, battles: full_count.Battles) -> bool:
    counts = full_count.count_users(battles, max_users_kept=settings.ARENA_MAX_USER_CLUSTERS)
    _truncate(cursor, USERS)
    full_count.write_users(cursor, counts)
    return counts.user_cells is not None


def _rebuild_in_sql(cursor) -> bool:
    """`_rebuild` for an arena too large to count in memory: GROUP BYs in PostgreSQL."""
    for table in (CELLS, USERS):
        _truncate(cursor, table)
        cursor.execute(
            f"INSERT INTO {table.day_table} (day, {table.columns}, count) "
            f"{table.count_sql('TRUE', by_day=True)}"
        )
        # In key order: the unique index then fills from left to right (half the time of
        # the hash order for the per-user totals, with keys spread by the hash).
        for rollup in table.rollups:
            cursor.execute(
                f"INSERT INTO {rollup.table} ({rollup.columns}, count) "
                f"SELECT {rollup.select}, SUM(count) FROM {table.day_table} "
                f"GROUP BY {rollup.select} ORDER BY {rollup.select}"
            )
        if not table.per_user:
            cursor.execute(
                f"INSERT INTO {table.total_table} ({table.columns}, count) "
                f"SELECT {table.columns}, SUM(count) FROM {table.day_table} "
                f"GROUP BY {table.columns} ORDER BY {table.columns}"
            )
    kept = _keeps_user_cells(cursor)
    if kept:
        _fill_user_cells(cursor)
    return kept


def _emptied(state: AggregationState) -> bool:
    """The count tables are unlogged (their WAL would double a rebuild's cost): a crash or
    a failover to a replica leaves them empty, which is then seen here and rebuilt."""
    return state.cells > 0 and not CellTotal.objects.exists()


def _take_marked_days(cursor) -> list[date]:
    """Delete the marks this transaction can see; the days they name."""
    cursor.execute(f"DELETE FROM {BattleMark._meta.db_table} RETURNING day")
    return sorted({row[0] for row in cursor.fetchall()})


def _work_mem(cursor) -> None:
    """This transaction's sort and hash memory (ARENA_AGGREGATION_WORK_MEM): the default 4 MB
    spills the grouping of a million per-user rows to disk."""
    cursor.execute("SELECT set_config('work_mem', %s, true)", [settings.ARENA_AGGREGATION_WORK_MEM])


def refresh(*, full: bool = False) -> Refresh:
    """Bring the count tables up to date (all of them when `full` or never built)."""
    alone = not connection.in_atomic_block
    with transaction.atomic(), connection.cursor() as cursor:
        _work_mem(cursor)
        state = _state()
        full = full or not state.built or _emptied(state)
        marked = _take_marked_days(cursor)
        before = state.group_version
        changed: list[tuple] = []
        if full:
            state.user_cells_current = _rebuild(cursor, alone=alone)
            days: tuple[date, ...] = ()
            state.rebuilt_at = timezone.now()
        else:
            for table in (CELLS, USERS):
                changed += _count_days(cursor, table, marked)
            days = tuple(marked)
        if full or days:
            state.group_version = uuid.uuid4().hex
        state.built, state.refreshed_at = True, timezone.now()
        state.cells = CellTotal.objects.count()
        fields = ["built", "refreshed_at", "cells", "rebuilt_at", "group_version"]
        # else not user_cells_current: the count functions keep it
        state.save(update_fields=[*fields, "user_cells_current"] if full else fields)
        if full:
            group_cache.forget()
        else:
            # At once, not on commit: if this rolls back, the copy is at a version that never
            # was the table's, and the next read goes to the table.
            group_cache.follow(before=before, after=state.group_version, rows=changed)
    return Refresh(days=days, full=full)


def _mismatches(cursor, table: _Table) -> int:
    """Cells in which the maintained totals (and their rollups) and a full count of the
    battles differ."""
    full = table.count_sql("TRUE", by_day=False)
    checked = [(table.total_table, table.columns, full)]
    if table.per_user and not _state().user_cells_current:
        checked = []  # not kept (many users): emptied, nothing to compare
    for rollup in table.rollups:
        sums = (
            f"SELECT {rollup.select}, SUM(count) FROM ({full}) AS f({table.columns}, count) "
            f"GROUP BY {rollup.select}"
        )
        checked.append((rollup.table, rollup.columns, sums))
    differ = 0
    for total, columns, truth in checked:
        mine = f"SELECT {columns}, count FROM {total}"
        cursor.execute(
            f"SELECT COUNT(*) FROM (({mine} EXCEPT ALL {truth}) "
            f"UNION ALL ({truth} EXCEPT ALL {mine})) AS diff"
        )
        differ += int(cursor.fetchone()[0])
    return differ


def reconcile() -> Refresh:
    """Refresh, then check the totals against a full count of the battles in the same
    snapshot (REPEATABLE READ, so votes arriving meanwhile cannot look like a mismatch).
    On any difference: an error in the log, and the tables are rebuilt from the battles."""
    outer = connection.in_atomic_block  # inside a test's transaction: no isolation change
    with transaction.atomic(), connection.cursor() as cursor:
        if not outer:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        _work_mem(cursor)
        done = refresh()
        if _in_memory(cursor):
            battles = full_count.read(cursor)
            kept = _state().user_cells_current
            mismatched = full_count.mismatches(
                cursor,
                full_count.count_cells(battles),
                full_count.count_users(battles, max_users_kept=len(battles) if kept else -1),
            )
        else:
            mismatched = sum(_mismatches(cursor, t) for t in (CELLS, USERS))
        state = _state()
        state.reconciled_at, state.last_mismatch = timezone.now(), mismatched
        state.save(update_fields=["reconciled_at", "last_mismatch"])
    if mismatched:
        log.error(
            "Maintained battle counts differ from a full count in %d cells; rebuilding them",
            mismatched,
        )
        refresh(full=True)
    return Refresh(days=done.days, full=done.full or bool(mismatched), mismatched=mismatched)


def read_cells() -> tuple[list[tuple], int]:
    """(rows of (dimension, value, A, B, outcome, count), distinct users) from the totals."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {CELLS.columns}, count FROM {CELLS.total_table}")
        rows = cursor.fetchall()
        cursor.execute(f"SELECT COUNT(*) FROM {UserTotal._meta.db_table}")
        users = int(cursor.fetchone()[0])
    return rows, users


def _user_cells_sql(groups: int | None) -> str:
    if groups == GROUPS:
        return (
            "SELECT user_group, model_a, model_b, outcome, count "
            f"FROM {UserGroupCellTotal._meta.db_table}"
        )
    # The per-user totals, or while they are not kept (many users) the per-day rows summed.
    current = AggregationState.objects.filter(pk=1).values_list("user_cells_current", flat=True)
    table = USERS.total_table if current.first() is not False else USERS.day_table
    if groups is None:
        return (
            f"SELECT {USERS.columns}, SUM(count) FROM {table} GROUP BY {USERS.columns}"
            if table == USERS.day_table
            else f"SELECT {USERS.columns}, count FROM {table}"
        )
    g = int(groups)
    return (
        f"SELECT MOD(MOD(user_key, {g}) + {g}, {g}) AS g, model_a, model_b, outcome, "
        f"SUM(count) FROM {table} GROUP BY g, model_a, model_b, outcome"
    )


def _group_version() -> str:
    version = AggregationState.objects.filter(pk=1).values_list("group_version", flat=True)
    return version.first() or ""


def read_user_cells(*, groups: int | None = None) -> list[tuple]:
    """Rows of (user key, A, B, outcome, count) from the totals; with `groups`, users summed
    into that many groups by their key (GroupedCounts.users_in_groups), so the rows read
    are bounded by the groups, not the users."""
    with transaction.atomic(), connection.cursor() as cursor:
        _work_mem(cursor)
        cursor.execute(_user_cells_sql(groups))
        return cursor.fetchall()


def read_user_cell_arrays(*, groups: int | None = None) -> tuple[np.ndarray, ...]:
    """`read_user_cells` as five int64 arrays (user or group, A, B, outcome, count). One 2-D
    array from the rows, then its columns: at a million rows 0.3 s, where transposing the
    tuples first (zip) took 1.4 s (a binary COPY parsed with numpy was slower still). The
    fixed groups come from this process's copy (group_cache) when it is current."""
    version = _group_version() if groups == GROUPS else ""  # read before the rows
    cached = group_cache.read(version)
    if cached is not None:
        return cached
    rows = read_user_cells(groups=groups)
    table = np.array(rows, dtype=np.int64).reshape(len(rows), 5)
    columns = tuple(np.ascontiguousarray(table[:, i]) for i in range(5))
    if version:
        group_cache.store(version, columns)
    return columns
