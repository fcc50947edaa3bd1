"""Binary COPY between PostgreSQL and numpy arrays (psycopg 3).

A query's integer columns come out in PostgreSQL's binary COPY format, one fixed-size record
a row, which numpy reads in blocks with no Python object per row or value; arrays go back the
same way, with text columns that are constant within a block (a slice dimension and value).
At ten million rows this moves the data several times faster than rows through Python tuples
or INSERT ... SELECT (docs/scaling.md, "Rebuilding the counts").
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
_BLOCK_BYTES = 1 << 24  # parse or send in blocks of about 16 MB
_BLOCK_ROWS = 1 << 18


def read_ints(cursor: Any, query: str, types: Sequence[str], params: Sequence[Any] = ()) -> list:
    """The rows of `query` as one array a column (native byte order, each column's own
    width). `types` name the columns' PostgreSQL types (see INT_TYPES); NULL is refused.
    `cursor` is psycopg's (Django's wrapper: `.cursor`)."""
    record = np.dtype(
        [("fields", ">i2")]
        + [f for i, t in enumerate(types) for f in ((f"len{i}", ">i4"), (f"v{i}", INT_TYPES[t]))]
    )
    widths = [np.dtype(INT_TYPES[t]).itemsize for t in types]
    parts: list[list[np.ndarray]] = [[] for _ in types]
    pending = bytearray()
    started = False

    def parse(final: bool) -> None:
        nonlocal pending, started
        start = 0
        if not started:
            if len(pending) < len(_HEADER) and not final:
                return
            if bytes(pending[: len(_SIGNATURE)]) != _SIGNATURE:
                raise ValueError("not a binary COPY stream")
            (extension,) = struct.unpack_from(">i", pending, len(_SIGNATURE) + 4)
            start, started = len(_HEADER) + extension, True
        rows = (len(pending) - start) // record.itemsize
        block = np.frombuffer(pending, dtype=record, count=rows, offset=start)
        # A NULL (no value bytes) or a wider or narrower type shifts every later row.
        misfit = final and len(pending) - start - rows * record.itemsize != len(_TRAILER)
        misfit = misfit or bool(rows and (block["fields"] != len(types)).any())
        for i, width in enumerate(widths):
            misfit = misfit or bool(rows and (block[f"len{i}"] != width).any())
        if misfit:
            del block
            raise ValueError(f"the rows are not {len(types)} non-NULL columns of {types}")
        for i in range(len(types)):
            parts[i].append(block[f"v{i}"].astype(block[f"v{i}"].dtype.newbyteorder("=")))
        del block
        pending = pending[start + rows * record.itemsize :]

    with cursor.copy(f"COPY ({query}) TO STDOUT (FORMAT binary)", params or None) as copy:
        # One message a row (that is the protocol): keep this loop lean.
        for data in copy:
            pending += data
            if len(pending) >= _BLOCK_BYTES:
                parse(final=False)
    parse(final=True)
    return [
        np.concatenate(p) if p else np.zeros(0, dtype=INT_TYPES[t])
        for p, t in zip(parts, types, strict=True)
    ]


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
