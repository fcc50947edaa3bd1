"""Counting rows by a composite key of small integer columns, in numpy.

The key columns are packed into one int64 (mixed radix, the first column most significant)
and the rows counted with one `bincount` when the key space is at most a few times the
number of rows, else by sorting (`np.unique`). At ten million rows either takes about a
second or less, where PostgreSQL's grouping took several seconds per key (docs/scaling.md).
Used to count every battle into the arena's count tables at once (leaderboard/full_count.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]

# A dense count array up to this many entries (256 MB of int64), and at most this many
# times the rows: beyond either, sorting is cheaper than allocating and scanning the space.
_BINCOUNT_MAX_SPACE = 1 << 25
_BINCOUNT_SPACE_PER_ROW = 4


def count_by(columns: Sequence[IntArray], sizes: Sequence[int]) -> tuple[list[IntArray], IntArray]:
    """The distinct rows of `columns` (column i holding values 0 .. sizes[i] - 1), in key
    order, and how many times each occurs.

    Returns one array a column and the counts. Raises OverflowError if the key space does
    not fit in an int64.
    """
    if len(columns) != len(sizes) or not columns:
        raise ValueError("count_by needs one size for each of at least one column")
    space = math.prod(int(s) for s in sizes)
    if space >= 1 << 63:
        raise OverflowError(f"a key space of {space} does not fit in an int64")
    n = len(columns[0])
    key = np.zeros(n, dtype=np.int64)
    for column, size in zip(columns, sizes, strict=True):
        key *= int(size)
        key += column
    keys: IntArray
    counts: IntArray
    if space <= min(_BINCOUNT_MAX_SPACE, max(_BINCOUNT_SPACE_PER_ROW * n, 1 << 16)):
        dense = np.bincount(key, minlength=space)
        keys = np.flatnonzero(dense).astype(np.int64)
        counts = dense[keys].astype(np.int64)
    else:
        keys, counts = np.unique(key, return_counts=True)
        counts = counts.astype(np.int64)
    out: list[IntArray] = []
    for size in reversed(sizes[1:]):
        out.append(keys % int(size))
        keys = keys // int(size)
    out.append(keys)
    out.reverse()
    return out, counts


def dense_codes(values: NDArray[np.int64]) -> tuple[IntArray, IntArray]:
    """(the distinct values in order, each value's index among them): arbitrary integers
    (model ids, days, 64-bit user keys) as codes 0 .. n - 1 for `count_by`."""
    values = np.asarray(values, dtype=np.int64)
    if len(values) and values.min() >= 0 and values.max() < max(4 * len(values), 1 << 16):
        # Small non-negative values (ids, days): a presence table instead of a sort.
        present = np.zeros(int(values.max()) + 1, dtype=bool)
        present[values] = True
        distinct = np.flatnonzero(present).astype(np.int64)
        code = np.cumsum(present, dtype=np.int64) - 1
        return distinct, code[values]
    distinct, index = np.unique(values, return_inverse=True)
    return distinct.astype(np.int64), index.astype(np.int64).ravel()
