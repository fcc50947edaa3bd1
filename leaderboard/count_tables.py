"""The count tables' layout: what each holds, its sums over all days, and how SQL counts it
from the battles (the refresh's recount of a day, the SQL rebuild and reconciliation)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db.backends.utils import CursorWrapper

from ingest.models import Battle

from .models import (
    CellTotal,
    DayCell,
    DayUserCell,
    UserCellTotal,
    UserGroupCellTotal,
    UserTotal,
)

DIMS = ("kind", "language", "task_type", "context_bucket", "natural_language")
ALL, SOURCE = "all", "source"  # the overall counts; simulated vs other battles
SOURCE_VALUE = "(CASE WHEN source = 'simulated' THEN 'simulated' ELSE 'other' END)"
# A battle's user as a 64-bit integer (see DayUserCell.user_key): PostgreSQL's own hash,
# cheaper than an md5 here.
USER_KEY = "hashtextextended(user_hash, 0)"
# Fixed groups of users (GroupedCounts.users_in_groups): group = user key mod GROUPS, kept in
# UserGroupCellTotal. The clustered intervals use them at ARENA_MAX_USER_CLUSTERS = GROUPS (the
# default); another setting groups the per-user totals when they are read.
GROUPS = 4096

BATTLE = Battle._meta.db_table
DAY = "(received_at AT TIME ZONE 'UTC')::date"
USER_GROUP = f"MOD(MOD(user_key, {GROUPS}) + {GROUPS}, {GROUPS})"


@dataclass(frozen=True)
class Rollup:
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
class Table:
    day_table: str
    total_table: str
    keys: tuple[str, ...]
    # The number of distinct users is a COUNT(*) of UserTotal, not a COUNT(DISTINCT) over
    # millions of per-user cells; the clustered intervals of a large arena read the users in
    # GROUPS fixed groups (UserGroupCellTotal), not millions of per-user rows.
    rollups: tuple[Rollup, ...] = ()
    per_user: bool = False  # the per-user cells (UserCellTotal kept only for few users)

    @property
    def columns(self) -> str:
        return ", ".join(self.keys)

    def count_sql(self, where: str, *, by_day: bool) -> str:
        """SELECT [day,] keys, count FROM the battles under `where` (non-excluded only)."""
        raise NotImplementedError


class Cells(Table):
    def count_sql(self, where: str, *, by_day: bool) -> str:
        # One scan for every dimension at once: GROUPING SETS gives one group per value of
        # each dimension (the others NULL in it) and () the overall counts.
        sets = [*DIMS, SOURCE_VALUE]
        names = [*DIMS, SOURCE]
        which = " ".join(
            f"WHEN GROUPING({e}) = 0 THEN '{n}'" for e, n in zip(sets, names, strict=True)
        )
        day = f"{DAY}, " if by_day else ""
        return (
            f"SELECT {day}CASE {which} ELSE '{ALL}' END, COALESCE({', '.join(sets)}, ''), "
            f"model_a_id, model_b_id, outcome, COUNT(*) FROM {BATTLE} "
            f"WHERE NOT excluded AND {where} GROUP BY {day}model_a_id, model_b_id, outcome, "
            f"GROUPING SETS ({', '.join(f'({e})' for e in sets)}, ())"
        )


class Users(Table):
    def count_sql(self, where: str, *, by_day: bool) -> str:
        day = f"{DAY}, " if by_day else ""
        cols = f"{USER_KEY}, model_a_id, model_b_id, outcome"
        return (
            f"SELECT {day}{cols}, COUNT(*) FROM {BATTLE} WHERE NOT excluded AND {where} "
            f"GROUP BY {day}{cols}"
        )


CELLS = Cells(
    DayCell._meta.db_table,
    CellTotal._meta.db_table,
    ("dimension", "value", "model_a", "model_b", "outcome"),
)
USERS = Users(
    DayUserCell._meta.db_table,
    UserCellTotal._meta.db_table,
    ("user_key", "model_a", "model_b", "outcome"),
    rollups=(
        Rollup(UserTotal._meta.db_table, ("user_key",)),
        Rollup(
            UserGroupCellTotal._meta.db_table,
            ("user_group", "model_a", "model_b", "outcome"),
            (USER_GROUP, "model_a", "model_b", "outcome"),
            cached=True,
        ),
    ),
    per_user=True,
)


def keeps_user_cells(cursor: CursorWrapper) -> bool:
    """Per-user totals are kept only while the clustered intervals resample users one by
    one (at most ARENA_MAX_USER_CLUSTERS users). A larger arena's intervals read the users in
    fixed groups (UserGroupCellTotal); keeping millions of per-user rows up to date as well
    was the part of a refresh that grew with the arena. Readers of per-user cells when they
    are not kept sum the per-day rows instead (`_user_cells_sql`)."""
    cursor.execute(f"SELECT COUNT(*) FROM {UserTotal._meta.db_table}")
    users, limit = int(cursor.fetchone()[0]), int(settings.ARENA_MAX_USER_CLUSTERS)
    return users <= limit


def fill_user_cells(cursor: CursorWrapper) -> None:
    cursor.execute(
        f"INSERT INTO {USERS.total_table} ({USERS.columns}, count) "
        f"SELECT {USERS.columns}, SUM(count) FROM {USERS.day_table} GROUP BY {USERS.columns} "
        f"ORDER BY {USERS.columns}"
    )


def truncate(cursor: CursorWrapper, table: Table) -> None:
    tables = [table.day_table, table.total_table, *(r.table for r in table.rollups)]
    cursor.execute(f"TRUNCATE {', '.join(tables)}")
