"""Binary COPY to and from numpy arrays (core/pgcopy.py) against PostgreSQL itself."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from django.db import connection, transaction

from core.pgcopy import read_ints, write_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def table():
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMPORARY TABLE copied (day date, name varchar(32), tag text, "
            "small smallint, mid integer, big bigint)"
        )
        yield cursor


def test_integers_of_every_width_and_dates_come_out_as_stored(table):
    table.execute(
        "INSERT INTO copied (day, small, mid, big) VALUES "
        "('2000-01-01', -32768, -2147483648, -9223372036854775808), "
        "('1999-12-31', 32767, 2147483647, 9223372036854775807), "
        "('2026-12-02', 0, 7, 42)"
    )
    day, small, mid, big = read_ints(
        table.cursor,
        "SELECT day, small, mid, big FROM copied ORDER BY day",
        ["date", "int2", "int4", "int8"],
    )
    # a date: its days since 2000-01-01, as PostgreSQL sends it
    assert day.tolist() == [-1, 0, (dt.date(2026, 12, 2) - dt.date(2000, 1, 1)).days]
    assert small.tolist() == [32767, -32768, 0]
    assert mid.tolist() == [2147483647, -2147483648, 7]
    assert big.tolist() == [2**63 - 1, -(2**63), 42]
    assert (small.dtype, mid.dtype, big.dtype) == (np.int16, np.int32, np.int64)


def test_many_rows_across_blocks_and_no_rows(table, monkeypatch):
    monkeypatch.setattr("core.pgcopy._BLOCK_BYTES", 100)  # parse every few rows
    (values,) = read_ints(table.cursor, "SELECT g::int8 FROM generate_series(1, 5000) g", ["int8"])
    assert values.tolist() == list(range(1, 5001))
    (none,) = read_ints(table.cursor, "SELECT big FROM copied", ["int8"])
    assert len(none) == 0


@pytest.mark.parametrize(
    "query",
    [
        "SELECT NULL::bigint",
        "SELECT 1::int4",  # 4 bytes where 8 were promised
        "SELECT g FROM generate_series(1, 40000) g",  # the same, found in a block mid-stream
    ],
)
def test_null_or_a_wrong_type_is_refused(table, query, monkeypatch):
    monkeypatch.setattr("core.pgcopy._BLOCK_BYTES", 1000)
    with pytest.raises(ValueError, match="not 1 non-NULL columns"), transaction.atomic():
        read_ints(table.cursor, query, ["int8"])


def test_blocks_with_constant_texts_are_written(table):
    columns = [("day", "date"), ("name", "text"), ("tag", "text"), ("small", "int2"),
               ("big", "int8")]  # fmt: skip
    blocks = [
        {"day": np.array([0, 1]), "name": "python", "tag": "", "small": np.array([1, 2]),
         "big": np.array([2**62, -5])},
        {"day": np.array([9]), "name": "español ✓", "tag": "x", "small": np.array([3]),
         "big": np.array([0])},
    ]  # fmt: skip
    assert write_rows(table.cursor, "copied", columns, blocks) == 3
    table.execute("SELECT day, name, tag, small, big FROM copied ORDER BY small")
    assert table.fetchall() == [
        (dt.date(2000, 1, 1), "python", "", 1, 2**62),
        (dt.date(2000, 1, 2), "python", "", 2, -5),
        (dt.date(2000, 1, 10), "español ✓", "x", 3, 0),
    ]


def test_an_integer_outside_its_column_type_writes_nothing(table):
    ok = {"small": np.array([1])}
    wrapped = {"small": np.array([70000])}  # numpy would wrap it into an int16
    with pytest.raises(OverflowError, match="small"), transaction.atomic():
        write_rows(table.cursor, "copied", [("small", "int2")], [ok, wrapped])
    table.execute("SELECT COUNT(*) FROM copied")
    assert table.fetchone()[0] == 0
