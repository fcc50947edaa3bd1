"""This process's copy of the user-group totals (UserGroupCellTotal), kept in step by its refreshes.

The clustered intervals of a large arena read every row of the group totals -- up to 4,096
per cell, a noticeable part of each recompute -- although a refresh changes only the
rows of the votes it counted. So every refresh gives the totals a new version
(AggregationState.group_version), and a refresh run by this process hands over the rows it
changed (the upsert's RETURNING) with the version it replaced: the copy follows them only if
it was at that version. Anything else that changes the totals -- another process's refresh,
a rebuild, a refresh rolled back -- leaves the copy at a version that is no longer the
table's, and the next read goes to the table. A key (group, A, B, outcome) is packed into one
int64, so the copy is two sorted arrays and an update a few vectorised searches.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

_ID_BITS, _OUTCOME_BITS = 20, 3  # model ids below 2**20, outcome codes below 8
_lock = threading.Lock()
Ints = NDArray[np.int64]
# A row a refresh returned: (group, A, B, outcome, new count).
ChangedRow = tuple[int, int, int, int, int]


@dataclass
class _Copy:
    version: str
    keys: Ints  # packed (group, A, B, outcome), sorted, unique
    counts: Ints


_copy: _Copy | None = None


def _packable(a: Ints, b: Ints, outcome: Ints) -> bool:
    limit = 1 << _ID_BITS
    return bool(
        (not len(a) or (a.min() >= 0 and b.min() >= 0 and max(a.max(), b.max()) < limit))
        and (not len(outcome) or (outcome.min() >= 0 and outcome.max() < 1 << _OUTCOME_BITS))
    )


def _pack(group: ArrayLike, a: ArrayLike, b: ArrayLike, outcome: ArrayLike) -> Ints:
    key = np.asarray(group, dtype=np.int64) << _ID_BITS | np.asarray(a, dtype=np.int64)
    key = key << _ID_BITS | np.asarray(b, dtype=np.int64)
    return key << _OUTCOME_BITS | np.asarray(outcome, dtype=np.int64)


def _unpack(key: Ints) -> tuple[Ints, Ints, Ints, Ints]:
    mask = (1 << _ID_BITS) - 1
    outcome = key & ((1 << _OUTCOME_BITS) - 1)
    b = (key >> _OUTCOME_BITS) & mask
    a = (key >> (_OUTCOME_BITS + _ID_BITS)) & mask
    group = key >> (_OUTCOME_BITS + 2 * _ID_BITS)
    return group, a, b, outcome


def forget() -> None:
    global _copy
    with _lock:
        _copy = None


def read(version: str) -> tuple[Ints, ...] | None:
    """(group, A, B, outcome, count) arrays of the totals at `version`, or None if this
    process has no copy of that version."""
    with _lock:
        copy = _copy
    if copy is None or not version or copy.version != version:
        return None
    return (*_unpack(copy.keys), copy.counts.copy())


def store(version: str, columns: tuple[Ints, ...]) -> None:
    """Keep `columns` (group, A, B, outcome, count: the whole table, read at `version`)."""
    global _copy
    group, a, b, outcome, count = columns
    if not version or not _packable(a, b, outcome):
        forget()
        return
    keys = _pack(group, a, b, outcome)
    order = np.argsort(keys, kind="stable")
    with _lock:
        _copy = _Copy(version, keys[order], np.asarray(count, dtype=np.int64)[order])


def follow(*, before: str, after: str, rows: list[ChangedRow]) -> None:
    """A refresh of this process moved the totals from version `before` to `after`, setting
    the rows (group, A, B, outcome, new count; 0 = deleted) it returned."""
    global _copy
    with _lock:
        copy = _copy
        if copy is None or copy.version != before:
            _copy = None
            return
        if not rows:
            _copy = _Copy(after, copy.keys, copy.counts)
            return
        cols = np.array(rows, dtype=np.int64).reshape(len(rows), 5).T
        if not _packable(cols[1], cols[2], cols[3]):
            _copy = None
            return
        changed, new_counts = _pack(*cols[:4]), cols[4]
        where = np.searchsorted(copy.keys, changed)
        found = where < len(copy.keys)
        found[found] = copy.keys[where[found]] == changed[found]
        counts = copy.counts.copy()
        counts[where[found]] = new_counts[found]
        added = np.argsort(changed[~found])
        fresh, fresh_counts = changed[~found][added], new_counts[~found][added]
        at = np.searchsorted(copy.keys, fresh)
        keys, counts = np.insert(copy.keys, at, fresh), np.insert(counts, at, fresh_counts)
        keep = counts != 0
        _copy = _Copy(after, keys[keep], counts[keep])
