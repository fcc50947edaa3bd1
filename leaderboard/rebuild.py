"""Counting every battle in SQL: the count tables rebuilt from scratch (`recompute_leaderboard
--full`, after a crash emptied them, after a reconciliation found a difference) and the
nightly reconciliation's full count (docs/scaling.md, "Rebuilding the counts")."""

from __future__ import annotations

from django.db.backends.utils import CursorWrapper

from .count_tables import CELLS, USERS, Table, fill_user_cells, keeps_user_cells, truncate


def rebuild(cursor: CursorWrapper) -> bool:
    """Every count table filled again from the battles by GROUP BYs in PostgreSQL; whether
    the per-user totals are kept (see `keeps_user_cells`)."""
    for table in (CELLS, USERS):
        truncate(cursor, table)
        cursor.execute(
            f"INSERT INTO {table.day_table} (day, {table.columns}, count) "
            f"{table.count_sql('TRUE', by_day=True)}"
        )
        # In key order: the unique index then fills from left to right (faster than the hash
        # order for the per-user totals, whose keys the hash spreads).
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


def mismatches(cursor: CursorWrapper, *, user_cells_kept: bool) -> int:
    """Cells in which the maintained totals (and their rollups) differ from a full count of
    the battles in this transaction's snapshot; the per-user totals compared only when
    `user_cells_kept`."""
    return sum(_mismatches(cursor, t, user_cells_kept) for t in (CELLS, USERS))


def _mismatches(cursor: CursorWrapper, table: Table, user_cells_kept: bool) -> int:
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
