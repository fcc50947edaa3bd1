"""Battle counts kept up to date day by day, so a recompute does not scan every battle.

PostgreSQL only (the embedded SQLite mode aggregates all battles each time, see
aggregation.py). Four tables hold the counts (leaderboard/models.py): per UTC day
(`DayCell`, `DayUserCell`) and their sums over all days (`CellTotal`, `UserCellTotal`),
which is what a recompute reads. A trigger on the battle table appends, for every statement
that inserts, changes or deletes battles, the days it touched to `BattleMark` (migration
0012), in the writer's own transaction.

`refresh()` re-aggregates only the marked days: it deletes the marks it can see (those of
committed transactions), counts their days again from the battles and adds to the totals
the difference between the new and the stored day counts, all in one transaction. A mark
it cannot see yet (its transaction still open) is not deleted and is read by the next
refresh; the battles are counted after the marks are read, so they include everything those
marks stand for (a day counted twice changes nothing). If the refresh fails, its deletion
of the marks is rolled back with it. No vote waits for a refresh: marks
are plain appends with no unique index, and only refreshes write the count tables (one at a
time, under a row lock on `AggregationState`). The count tables are UNLOGGED (derived data;
a crash or failover empties them and the next refresh rebuilds them).

Per-user totals (`UserCellTotal`) are kept only while the arena has at most
ARENA_MAX_USER_CLUSTERS users, whose clustered intervals resample them one by one; above
that the intervals read users in fixed groups (`UserGroupCellTotal`), the per-user totals
are emptied and reads of per-user cells sum the per-day rows. What a refresh does is then
bounded by the votes it counts, not by the millions of per-user rows of a large arena.

`refresh(full=True)` recounts everything in SQL (rebuild.py); `reconcile()` (nightly)
compares the maintained totals with a full count of the battles in one snapshot (rebuild.py),
logs a mismatch as an error and lets the full count win. The tables' layout and their SQL counts
are in count_tables.py.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.backends.utils import CursorWrapper
from django.utils import timezone

from . import group_cache, rebuild
from .count_tables import (
    CELLS,
    GROUPS,
    USER_KEY,
    USERS,
    Rollup,
    Table,
    fill_user_cells,
    keeps_user_cells,
)
from .group_cache import ChangedRow
from .models import AggregationState, BattleMark, CellTotal, UserGroupCellTotal, UserTotal

log = logging.getLogger(__name__)
CellRow = tuple[str, str, int, int, int, int]  # dimension, value, A, B, outcome, count
PairRow = tuple[int, int, int, int]  # A, B, outcome, count
UserRow = tuple[int, int, int, int, int]  # user key (or group), A, B, outcome, count


@dataclass(frozen=True)
class Refresh:
    days: tuple[date, ...]  # the days counted again (none after a full rebuild)
    full: bool
    mismatched: int = 0  # reconcile only: total cells that differed


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


def _count_days(cursor: CursorWrapper, table: Table, days: list[date]) -> list[ChangedRow]:
    """Replace the counts of `days` by a fresh count of their battles, totals adjusted.

    Only the difference reaches the totals: the fresh count goes to a temporary table, the
    fresh count minus the stored one (where they differ) to another, and each total gets
    that difference summed by its keys. A day that gained 10,000 votes touches the totals'
    keys of those votes, not every key of the day twice (taking it off, then adding it
    back), which on a large arena's per-user table was most of a refresh. Returns the rows
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
    changed: list[ChangedRow] = []
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
    if table.per_user and not _state().user_cells_current and keeps_user_cells(cursor):
        _rebuild_user_cells(cursor)
    return changed


def _add(cursor: CursorWrapper, total: Rollup, delta: str) -> list[ChangedRow]:
    """Add the differences in table `delta` (the finer keys) to `total`, by its keys; for a
    cached total, the rows it changed with their new counts."""
    cols, sel = total.columns, total.select
    cursor.execute(
        f"INSERT INTO {total.table} ({cols}, count) SELECT {sel}, SUM(count) FROM {delta} "
        f"GROUP BY {sel} HAVING SUM(count) <> 0 "
        f"ON CONFLICT ({cols}) DO UPDATE SET count = {total.table}.count + EXCLUDED.count"
        + (f" RETURNING {cols}, {total.table}.count" if total.cached else "")
    )
    changed: list[ChangedRow] = cursor.fetchall() if total.cached else []
    cursor.execute(f"DELETE FROM {total.table} WHERE count = 0")
    return changed


def _own_total(cursor: CursorWrapper, table: Table) -> tuple[Rollup, ...]:
    """The table's sum over all days, where it is kept: always for the cells; for the
    per-user cells only while they are current and the arena's users few enough to be
    resampled one by one (else they are emptied and marked out of date, see
    `keeps_user_cells`). Called after the rollups, so UserTotal already counts the users."""
    own = Rollup(table.total_table, table.keys)
    if not table.per_user:
        return (own,)
    state = _state()
    if not state.user_cells_current:
        return ()
    if keeps_user_cells(cursor):
        return (own,)
    cursor.execute(f"TRUNCATE {table.total_table}")
    state.user_cells_current = False
    state.save(update_fields=["user_cells_current"])
    return ()


def _rebuild_user_cells(cursor: CursorWrapper) -> None:
    """UserCellTotal from the per-day rows (the arena has become small enough to keep it)."""
    cursor.execute(f"TRUNCATE {USERS.total_table}")
    fill_user_cells(cursor)
    state = _state()
    state.user_cells_current = True
    state.save(update_fields=["user_cells_current"])


def _emptied(state: AggregationState) -> bool:
    """The count tables are unlogged (their WAL would double a rebuild's cost): a crash or
    a failover to a replica leaves them empty, which is then seen here and rebuilt."""
    return state.cells > 0 and not CellTotal.objects.exists()


def _take_marked_days(cursor: CursorWrapper) -> list[date]:
    """Delete the marks this transaction can see; the days they name."""
    cursor.execute(f"DELETE FROM {BattleMark._meta.db_table} RETURNING day")
    return sorted({row[0] for row in cursor.fetchall()})


def _work_mem(cursor: CursorWrapper) -> None:
    """This transaction's sort and hash memory (ARENA_AGGREGATION_WORK_MEM): the default 4 MB
    spills the grouping of a million per-user rows to disk."""
    cursor.execute("SELECT set_config('work_mem', %s, true)", [settings.ARENA_AGGREGATION_WORK_MEM])


def refresh(*, full: bool = False) -> Refresh:
    """Bring the count tables up to date (all of them when `full` or never built)."""
    with transaction.atomic(), connection.cursor() as cursor:
        _work_mem(cursor)
        state = _state()
        full = full or not state.built or _emptied(state)
        marked = _take_marked_days(cursor)
        before = state.group_version
        changed: list[ChangedRow] = []
        if full:
            state.user_cells_current = rebuild.rebuild(cursor)
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
        mismatched = rebuild.mismatches(cursor, user_cells_kept=_state().user_cells_current)
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


def userless_key(cursor: CursorWrapper) -> int:
    """The user key of battles stored without a user (an empty user_hash)."""
    cursor.execute(f"SELECT {USER_KEY.replace('user_hash', '%s')}", [""])
    return int(cursor.fetchone()[0])


def read_cells() -> tuple[list[CellRow], int]:
    """(rows of (dimension, value, A, B, outcome, count), distinct users) from the totals;
    battles without a user are not a user."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {CELLS.columns}, count FROM {CELLS.total_table}")
        rows: list[CellRow] = cursor.fetchall()
        cursor.execute(
            f"SELECT COUNT(*) FROM {UserTotal._meta.db_table} WHERE user_key <> %s",
            [userless_key(cursor)],
        )
        users = int(cursor.fetchone()[0])
    return rows, users


def read_userless_cells() -> list[PairRow]:
    """Rows of (A, B, outcome, count) of the battles without a user, from the totals (the
    per-day rows summed while the per-user totals are not kept)."""
    with transaction.atomic(), connection.cursor() as cursor:
        key = userless_key(cursor)
        cursor.execute(f"SELECT 1 FROM {UserTotal._meta.db_table} WHERE user_key = %s", [key])
        if cursor.fetchone() is None:
            return []
        current = AggregationState.objects.filter(pk=1).values_list("user_cells_current", flat=True)
        table = USERS.total_table if current.first() is not False else USERS.day_table
        _work_mem(cursor)
        cursor.execute(
            f"SELECT model_a, model_b, outcome, SUM(count) FROM {table} WHERE user_key = %s "
            "GROUP BY model_a, model_b, outcome",
            [key],
        )
        rows: list[PairRow] = cursor.fetchall()
        return rows


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


def read_user_cells(*, groups: int | None = None) -> list[UserRow]:
    """Rows of (user key, A, B, outcome, count) from the totals; with `groups`, users summed
    into that many groups by their key (GroupedCounts.users_in_groups), so the rows read
    are bounded by the groups, not the users."""
    with transaction.atomic(), connection.cursor() as cursor:
        _work_mem(cursor)
        cursor.execute(_user_cells_sql(groups))
        rows: list[UserRow] = cursor.fetchall()
        return rows


def read_user_cell_arrays(*, groups: int | None = None) -> tuple[np.ndarray, ...]:
    """`read_user_cells` as five int64 arrays (user or group, A, B, outcome, count). One 2-D
    array from the rows, then its columns: several times faster than transposing the tuples
    first (zip). The fixed groups come from this process's copy (group_cache) when it is
    current."""
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
