"""Integer columns from PostgreSQL into numpy arrays, and rows back by binary COPY (psycopg 3).

Reading: PostgreSQL packs the rows of each block of consecutive ids into one value, their
columns' binary forms end to end (`int8send(a) || int4send(b) || ...`, one `string_agg` a
block, found through the primary key), so the client handles a few thousand values of a few
hundred kilobytes that numpy reads as fixed-size records -- not a Python object, nor even a
protocol message, per row (a COPY sends one message a row, and reading ten million of them
took ~14 s of Python). Writing: binary COPY, with text columns that are constant within a
block of rows (a slice dimension and value). At ten million rows this moves the data several
times faster than rows through Python tuples or INSERT ... SELECT (docs/scaling.md,
"Rebuilding the counts").
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

_SIGNATURE = b"PGCOPY\n\xff\r\n\x00"
_HEADER = _SIGNATURE + struct.pack(">ii", 0, 0)
_TRAILER = struct.pack(">h", -1)
# Wire formats of the integer types (a date is its days since 2000-01-01).
INT_TYPES = {"int2": ">i2", "int4": ">i4", "int8": ">i8", "date": ">i4"}
_SQL_TYPES = {"int2": "smallint", "int4": "integer", "int8": "bigint", "date": "date"}
_SEND = {"int2": "int2send", "int4": "int4send", "int8": "int8send", "date": "date_send"}
_BLOCK_IDS = 8192  # ids a packed value covers (~300 KB for a battle's seven integers)
_BLOCK_ROWS = 1 << 18


def read_ints(
    cursor: Any,
    table: str,
    columns: Sequence[tuple[str, str]],
    where: str = "TRUE",
    *,
    part: int = 0,
    parts: int = 1,
) -> list[np.ndarray]:
    """The `columns` -- (SQL expression, type of INT_TYPES) -- of `table`'s rows under
    `where`, one array a column in native byte order, each of its type's width. `table` needs
    an integer primary key `id`; with `parts` > 1, only the blocks of ids numbered `part`
    modulo `parts` (so several connections can read a table at once). A NULL is refused.
    `cursor` is psycopg's (Django's wrapper: `.cursor`)."""
    packed = " || ".join(f"{_SEND[kind]}(({expr})::{_SQL_TYPES[kind]})" for expr, kind in columns)
    query = (
        f"SELECT r.n, r.b FROM (SELECT MIN(id) AS lo, MAX(id) AS hi FROM {table}) AS m, "
        f"generate_series(m.lo + {int(part)} * {_BLOCK_IDS}, m.hi, {int(parts)} * {_BLOCK_IDS})"
        f" AS s(start), LATERAL (SELECT COUNT(*) AS n, string_agg({packed}, ''::bytea) AS b "
        f"FROM {table} WHERE id >= s.start AND id < s.start + {_BLOCK_IDS} AND ({where})) AS r"
    )
    record = np.dtype([(f"v{i}", INT_TYPES[kind]) for i, (_, kind) in enumerate(columns)])
    parts_of: list[list[np.ndarray]] = [[] for _ in columns]
    with cursor.copy(f"COPY ({query}) TO STDOUT (FORMAT binary)") as copy:
        stream = _rows(copy)
        for rows, data in stream:
            # string_agg skips a NULL (a NULL column makes the row's value NULL): refuse it.
            if len(data) != rows * record.itemsize:
                raise ValueError(f"{table}: a row holds NULL in {[e for e, _ in columns]}")
            block = np.frombuffer(data, dtype=record)
            for i in range(len(columns)):
                parts_of[i].append(block[f"v{i}"].astype(block[f"v{i}"].dtype.newbyteorder("=")))
    return [
        np.concatenate(p) if p else np.zeros(0, dtype=np.dtype(INT_TYPES[kind]).newbyteorder("="))
        for p, (_, kind) in zip(parts_of, columns, strict=True)
    ]


def _rows(copy: Any) -> Iterable[tuple[int, bytes]]:
    """(count, packed bytes) of each row of a binary COPY of (bigint, bytea) rows."""
    head = True
    for message in copy:
        data = bytes(message)
        if head:  # the first message starts with the stream's header
            if not data.startswith(_SIGNATURE):
                raise ValueError("not a binary COPY stream")
            (extension,) = struct.unpack_from(">i", data, len(_SIGNATURE) + 4)
            data, head = data[len(_HEADER) + extension :], False
        if data == _TRAILER or not data:
            continue
        fields, _, rows, size = struct.unpack_from(">hiqi", data)
        if fields != 2:
            raise ValueError("expected (count, packed rows) from the server")
        yield rows, (data[18 : 18 + size] if size >= 0 else b"")


def write_rows(
    cursor: Any,
    table: str,
    columns: Sequence[tuple[str, str]],
    blocks: Iterable[Mapping[str, Any]],
) -> int:
    """COPY `blocks` into `table`. `columns` are (name, type): a type of INT_TYPES, or "text"
    for a column whose value is one str for the whole block. Each block maps every column to
    an integer array (all of one length) or, for text, a str. Integers that do not fit their
    column's type are refused (numpy would wrap them). Returns the rows written."""
    names = ", ".join(name for name, _ in columns)
    written = 0
    with cursor.copy(f"COPY {table} ({names}) FROM STDIN (FORMAT binary)") as copy:
        copy.write(_HEADER)
        for block in blocks:
            for chunk in _encode(columns, block):
                copy.write(chunk)
            written += _rows_of(columns, block)
        copy.write(_TRAILER)
    return written


def _rows_of(columns: Sequence[tuple[str, str]], block: Mapping[str, Any]) -> int:
    return next(len(block[n]) for n, t in columns if t != "text")


def _encode(columns: Sequence[tuple[str, str]], block: Mapping[str, Any]) -> Iterable[bytes]:
    fields: list[tuple[str, str]] = [("fields", ">i2")]
    lengths: dict[str, int] = {}
    for i, (name, kind) in enumerate(columns):
        if kind == "text":
            raw = str(block[name]).encode()
            lengths[f"len{i}"] = len(raw)
            fields.append((f"len{i}", ">i4"))
            if raw:  # an empty text is its length alone
                fields.append((f"v{i}", f"S{len(raw)}"))
        else:
            lengths[f"len{i}"] = np.dtype(INT_TYPES[kind]).itemsize
            fields += [(f"len{i}", ">i4"), (f"v{i}", INT_TYPES[kind])]
    record = np.dtype(fields)
    n = _rows_of(columns, block)
    for name, kind in columns:
        if kind != "text" and n:
            info = np.iinfo(INT_TYPES[kind])
            values = np.asarray(block[name])
            if values.min() < info.min or values.max() > info.max:
                raise OverflowError(f"{name}: values outside PostgreSQL's {kind}")
    for start in range(0, n, _BLOCK_ROWS):
        stop = min(n, start + _BLOCK_ROWS)
        out = np.empty(stop - start, dtype=record)
        out["fields"] = len(columns)
        for i, (name, kind) in enumerate(columns):
            out[f"len{i}"] = lengths[f"len{i}"]
            if kind == "text":
                if lengths[f"len{i}"]:
                    out[f"v{i}"] = str(block[name]).encode()
            else:
                out[f"v{i}"] = np.asarray(block[name])[start:stop]
        yield out.tobytes()
