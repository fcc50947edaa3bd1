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
            "CREATE TEMPORARY TABLE copied (id bigserial PRIMARY KEY, day date, "
            "name varchar(32), tag text, small smallint, mid integer, big bigint)"
        )
        yield cursor


def test_integers_of_every_width_and_dates_come_out_as_stored(table):
    table.execute(
        "INSERT INTO copied (day, small, mid, big) VALUES "
        "('2000-01-01', -32768, -2147483648, -9223372036854775808), "
        "('1999-12-31', 32767, 2147483647, 9223372036854775807), "
        "('2026-12-02', 0, 7, 42)"
    )
    columns = [("day", "date"), ("small", "int2"), ("mid", "int4"), ("big", "int8")]
    day, small, mid, big = read_ints(table.cursor, "copied", columns)
    # a date: its days since 2000-01-01, as PostgreSQL sends it
    assert day.tolist() == [0, -1, (dt.date(2026, 12, 2) - dt.date(2000, 1, 1)).days]
    assert small.tolist() == [-32768, 32767, 0]
    assert mid.tolist() == [-2147483648, 2147483647, 7]
    assert big.tolist() == [-(2**63), 2**63 - 1, 42]
    assert (small.dtype, mid.dtype, big.dtype) == (np.int16, np.int32, np.int64)
    # expressions, a filter
    (doubled,) = read_ints(table.cursor, "copied", [("mid * 2::bigint", "int8")], "small >= 0")
    assert doubled.tolist() == [4294967294, 14]


@pytest.mark.parametrize("parts", [1, 2, 3])
def test_many_rows_across_blocks_gaps_and_parts(table, monkeypatch, parts):
    monkeypatch.setattr("core.pgcopy._BLOCK_IDS", 7)  # many blocks, some empty
    table.execute("INSERT INTO copied (mid) SELECT g FROM generate_series(1, 5000) g")
    table.execute("DELETE FROM copied WHERE id BETWEEN 100 AND 300 OR id % 11 = 0")
    table.execute("SELECT mid FROM copied ORDER BY id")
    expected = [row[0] for row in table.fetchall()]
    got = [
        read_ints(table.cursor, "copied", [("mid", "int4")], part=p, parts=parts)[0]
        for p in range(parts)
    ]
    assert sorted(np.concatenate(got).tolist()) == expected
    assert all(len(g) for g in got)  # every part had some
    assert not set(got[0].tolist()) & set(got[-1].tolist()) or parts == 1


def test_no_rows(table):
    (none,) = read_ints(table.cursor, "copied", [("big", "int8")])
    assert len(none) == 0 and none.dtype == np.int64


def test_a_null_is_refused(table):
    table.execute("INSERT INTO copied (big, mid) VALUES (1, 1), (NULL, 2), (3, 3)")
    with pytest.raises(ValueError, match="NULL"), transaction.atomic():
        read_ints(table.cursor, "copied", [("mid", "int4"), ("big", "int8")])


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
