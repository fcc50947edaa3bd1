"""Counting every battle: the count tables rebuilt from scratch (`recompute_leaderboard
--full`, after a crash emptied them, after a reconciliation found a difference) and the
nightly reconciliation's full count.

In the worker's memory (full_count.py) below ARENA_REBUILD_IN_MEMORY_MAX_BATTLES, else by
GROUP BYs in PostgreSQL (the reference the tests compare the memory path with).
"""

from __future__ import annotations

import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from django.conf import settings
from django.db import connection, transaction

from . import full_count
from .count_tables import (
    BATTLE,
    CELLS,
    USERS,
    Table,
    fill_user_cells,
    keeps_user_cells,
    truncate,
)

# A rebuild reads the battles over this many connections at once (one core each for
# PostgreSQL's packing of the rows); one waits at most this long for the others to share its
# snapshot.
READERS = 2
READ_SETUP_SECONDS = 120


def in_memory(cursor) -> bool:
    """Whether a rebuild counts the battles in this process (full_count) rather than in
    SQL: below ARENA_REBUILD_IN_MEMORY_MAX_BATTLES (by the planner's estimate; -1 when
    never analysed)."""
    cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [BATTLE])
    estimate = max(float(cursor.fetchone()[0]), 0.0)
    return estimate < settings.ARENA_REBUILD_IN_MEMORY_MAX_BATTLES


def rebuild(cursor, *, alone: bool) -> bool:
    """Every count table filled again from the battles; whether the per-user totals are
    kept (see `keeps_user_cells`).

    `alone` (refresh() is not inside a caller's transaction): the users' tables are read,
    counted and written on a second connection while this one does the cells', so the two
    halves of the work take one core each. Safe in two transactions: the marks this refresh
    deleted were read before either count began, so both see every battle those marks stand
    for; whichever commits while the other fails has counted days that stay marked, and the
    next refresh counts them again (a day counted twice changes nothing).
    """
    if not in_memory(cursor):
        return _in_sql(cursor)
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
    truncate(cursor, CELLS)
    full_count.write_cells(cursor, counts)


def _write_users(cursor, battles: full_count.Battles) -> bool:
    counts = full_count.count_users(battles, max_users_kept=settings.ARENA_MAX_USER_CLUSTERS)
    truncate(cursor, USERS)
    full_count.write_users(cursor, counts)
    return counts.user_cells is not None


def _in_sql(cursor) -> bool:
    """`rebuild` for an arena too large to count in memory: GROUP BYs in PostgreSQL."""
    for table in (CELLS, USERS):
        truncate(cursor, table)
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
    kept = keeps_user_cells(cursor)
    if kept:
        fill_user_cells(cursor)
    return kept


def mismatches(cursor, *, user_cells_kept: bool) -> int:
    """Cells in which the maintained totals (and their rollups) differ from a full count of
    the battles in this transaction's snapshot; the per-user totals compared only when
    `user_cells_kept`."""
    if in_memory(cursor):
        battles = full_count.read(cursor)
        return full_count.mismatches(
            cursor,
            full_count.count_cells(battles),
            full_count.count_users(battles, max_users_kept=len(battles) if user_cells_kept else -1),
        )
    return sum(_mismatches_in_sql(cursor, t, user_cells_kept) for t in (CELLS, USERS))


def _mismatches_in_sql(cursor, table: Table, user_cells_kept: bool) -> int:
    full = table.count_sql("TRUE", by_day=False)
    # Per-user totals not kept (many users) are empty: nothing to compare.
    own_kept = not table.per_user or user_cells_kept
    checked = [(table.total_table, table.columns, full)] if own_kept else []
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
