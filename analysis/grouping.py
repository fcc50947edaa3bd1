"""Grouped battle counts: the only input the rating engine reads.

Computes a :class:`GroupedCounts` table -- one row per distinct (model on top, model at the
bottom, outcome) with the number of battles that had it -- either from raw per-battle arrays
(:func:`group_battles`, used by tests, imports and the simulator) or from rows that a SQL
``GROUP BY model_a, model_b, outcome`` already produced (:func:`from_count_rows`).

Two optional columns, both merged with the rows:

* ``user``: the cluster (voter) index of the row, for user-clustered intervals. Rows are then
  per (user, top, bottom, outcome): a SQL ``GROUP BY user_id, model_a, model_b, outcome``
  (:func:`from_user_count_rows`). Everything that ignores users sums over them.
* ``weight``: the sum of the battles' sampling weights in the row (e.g. inverse pair
  propensities, see ``weights``); absent means one per battle. A weighted fit maximises the
  weighted likelihood; since every battle of a row has the same (pair, outcome), row sums of
  the weights are all the point estimate and the user-clustered variance need.

Conventions: ``a`` is the completion shown on top (position 0), ``b`` the one at the bottom;
``OUTCOME_TIE`` also covers "both bad". Rows are canonical (sorted by ``a, b, outcome, user``,
duplicates merged, zero counts dropped), so two tables holding the same battles compare equal
and give bit-identical results downstream.

Longer than most modules, on purpose: the table and the constructors that canonicalise it
belong together.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

OUTCOME_A, OUTCOME_B, OUTCOME_TIE = 0, 1, 2
_N_OUTCOMES = 3

__all__ = [
    "OUTCOME_A",
    "OUTCOME_B",
    "OUTCOME_TIE",
    "CellCounts",
    "GroupedCounts",
    "from_count_rows",
    "from_user_count_rows",
    "group_battles",
]


def _readonly_or_none(x: np.ndarray | None) -> np.ndarray | None:
    return None if x is None else _readonly(x)


def _readonly(x: np.ndarray) -> np.ndarray:
    """Freeze one of ``_canonicalise``'s arrays (all new: no caller's array is touched)."""
    x = np.asarray(x, dtype=np.int64 if x.dtype.kind in "iu" else x.dtype)
    x.setflags(write=False)
    return x


class CellCounts:
    """What any table of battle cells answers from its ``models`` and ``count`` columns."""

    models: tuple[str, ...]
    count: np.ndarray

    @property
    def n_models(self) -> int:
        return len(self.models)

    @property
    def total(self) -> int:
        """Total number of battles."""
        return int(self.count.sum())


@dataclass(frozen=True, eq=False)
class GroupedCounts(CellCounts):
    """Battles grouped into counts per (top model, bottom model, outcome).

    ``models`` may list models with no battles at all; they are reported as such. Arrays are
    copied, canonicalised (sorted, merged, zero counts dropped) and made read-only.
    ``positions_known=False`` says the a/b order carries no top/bottom meaning (some imports);
    the position-aware fit then refuses to run. ``user`` (optional, non-negative int per row)
    and ``weight`` (optional, non-negative float per row: the sum of its battles' weights)
    are described in the module docstring.
    """

    models: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    count: np.ndarray
    positions_known: bool = True
    user: np.ndarray | None = None
    weight: np.ndarray | None = None

    def __post_init__(self) -> None:
        models = tuple(str(m) for m in self.models)
        if len(set(models)) != len(models):
            raise ValueError("model keys must be unique")
        a = np.asarray(self.a).astype(np.int64, copy=False).ravel()
        b = np.asarray(self.b).astype(np.int64, copy=False).ravel()
        o = np.asarray(self.outcome).astype(np.int64, copy=False).ravel()
        c = np.asarray(self.count)
        if c.dtype.kind == "f" and (not np.all(np.isfinite(c)) or np.any(c != np.round(c))):
            raise ValueError("counts must be whole numbers")
        c = c.astype(np.int64, copy=False).ravel()
        if not (len(a) == len(b) == len(o) == len(c)):
            raise ValueError("a, b, outcome and count must have the same length")
        k = len(models)
        if len(a) and (a.min() < 0 or b.min() < 0 or a.max() >= k or b.max() >= k):
            raise ValueError("model index out of range")
        if np.any(a == b):
            raise ValueError("a model cannot battle itself")
        if len(o) and (o.min() < 0 or o.max() >= _N_OUTCOMES):
            raise ValueError("outcome must be OUTCOME_A, OUTCOME_B or OUTCOME_TIE")
        if np.any(c < 0):
            raise ValueError("counts must be non-negative")
        u = (
            None
            if self.user is None
            else np.asarray(self.user).astype(np.int64, copy=False).ravel()
        )
        if u is not None and (len(u) != len(c) or (len(u) and u.min() < 0)):
            raise ValueError("user must be one non-negative index per row")
        w = None if self.weight is None else np.asarray(self.weight, dtype=float).ravel()
        if w is not None and (len(w) != len(c) or not np.all(np.isfinite(w)) or np.any(w < 0)):
            raise ValueError("weight must be one finite, non-negative number per row")
        a, b, o, c, u, w = _canonicalise(a, b, o, c, k, u, w)
        object.__setattr__(self, "models", models)
        object.__setattr__(self, "a", _readonly(a))
        object.__setattr__(self, "b", _readonly(b))
        object.__setattr__(self, "outcome", _readonly(o))
        object.__setattr__(self, "count", _readonly(c))
        object.__setattr__(self, "positions_known", bool(self.positions_known))
        object.__setattr__(self, "user", _readonly_or_none(u))
        object.__setattr__(self, "weight", _readonly_or_none(w))

    @property
    def n_users(self) -> int:
        """Number of user indices (largest + 1; 0 without a user column)."""
        return 0 if self.user is None or len(self.user) == 0 else int(self.user.max()) + 1

    def row_weight(self) -> np.ndarray:
        """Weight sum per row (the count when there is no weight column)."""
        return self.count.astype(float) if self.weight is None else self.weight.copy()

    def pooled(self) -> GroupedCounts:
        """The same battles without the user column (summed over users), weights kept.

        Computed once per table (kept on it): what ignores users -- the comparison graph,
        the page matrices, votes per model -- reads these few rows instead of one row per
        user (about a million for the overall board of a large arena)."""
        if self.user is None:
            return self
        pooled = self.__dict__.get("_pooled")
        if pooled is None:
            pooled = replace(self, user=None)
            object.__setattr__(self, "_pooled", pooled)
        return pooled

    def users_in_groups(self, groups: int) -> GroupedCounts:
        """The same battles with user ``u`` in group ``u % groups`` (rows merged per group).

        For user-clustered intervals on arenas with very many users: a partition of
        independent users into groups is a partition into independent units, so resampling
        (or summing scores over) the groups is a valid clustered method; with thousands of
        groups it gives the per-user intervals up to a little extra Monte Carlo noise, at a
        cost bounded by the number of groups (docs/ratings.md, "Users in groups"). The
        groups are fixed by the user index, not drawn: the same data gives the same groups.
        """
        if groups < 1:
            raise ValueError("groups must be at least 1")
        if self.user is None or self.n_users <= groups:
            return self
        return replace(self, user=self.user % groups)

    def independent_user(self, user: int, *, groups: int | None = None) -> GroupedCounts:
        """The same battles with those of ``user`` as independent votes, each a cluster of
        its own: new user indices after the others', or with ``groups``, when the clusters
        would outnumber them, each in a group of 0..groups-1 drawn at random (the other
        users are then expected in those groups already).

        For battles that came without a user id: counting them as one user would make them
        a single cluster, and the clustered intervals of a board of such battles a point.
        A weight column is split in proportion to the counts (weights are constant within
        a row's battles for the weights in use)."""
        if self.user is None:
            raise ValueError("independent_user needs a user column")
        rows = self.user == user
        if not rows.any():
            return self
        keep = ~rows
        c = self.count[rows]
        others = len(np.unique(self.user[keep]))
        # Which battle becomes which cluster is drawn at random (seeded): an order that
        # follows the rows (sorted by outcome) would put related battles together and make
        # the groups' scores cancel, understating the variance.
        rng = np.random.default_rng(0)
        row = np.repeat(np.arange(len(c)), c)
        if groups is not None and others + int(c.sum()) > groups:
            key = row * groups + rng.integers(0, groups, size=len(row))
            key, count = np.unique(key, return_counts=True)
            row, new_user = key // groups, key % groups
        else:
            count = np.ones(len(row), dtype=np.int64)
            base = 0 if not keep.any() else int(self.user[keep].max()) + 1
            new_user = base + rng.permutation(len(row))
        weight = None
        if self.weight is not None:
            per_battle = self.weight[rows] / np.maximum(c, 1)
            weight = np.concatenate([self.weight[keep], per_battle[row] * count])
        return replace(
            self,
            a=np.concatenate([self.a[keep], self.a[rows][row]]),
            b=np.concatenate([self.b[keep], self.b[rows][row]]),
            outcome=np.concatenate([self.outcome[keep], self.outcome[rows][row]]),
            count=np.concatenate([self.count[keep], count]),
            user=np.concatenate([self.user[keep], new_user]),
            weight=weight,
        )

    def active_users(self) -> int:
        """Number of distinct users with battles (0 without a user column)."""
        if self.user is None:
            return 0
        return int(np.count_nonzero(np.bincount(self.user, weights=self.count)))

    def with_weight(self, weight: np.ndarray | None) -> GroupedCounts:
        """The same rows with another weight column (one sum per row, in row order)."""
        return replace(self, weight=weight)

    def index(self, model: str) -> int:
        """Index of a model key (ValueError if unknown)."""
        try:
            return self.models.index(model)
        except ValueError:
            raise ValueError(f"unknown model {model!r}") from None

    def battles_per_model(self) -> np.ndarray:
        """Number of battles each model took part in (int array, one per model)."""
        k = self.n_models
        return (
            np.bincount(self.a, weights=self.count, minlength=k)
            + np.bincount(self.b, weights=self.count, minlength=k)
        ).astype(np.int64)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GroupedCounts):
            return NotImplemented
        return (
            self.models == other.models
            and self.positions_known == other.positions_known
            and all(
                _same(getattr(self, f), getattr(other, f))
                for f in ("a", "b", "outcome", "count", "user", "weight")
            )
        )

    __hash__ = None  # type: ignore[assignment]


def _same(x: np.ndarray | None, y: np.ndarray | None) -> bool:
    if x is None or y is None:
        return x is None and y is None
    return bool(np.array_equal(x, y))


Rows = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]


def _canonicalise(
    a: np.ndarray,
    b: np.ndarray,
    o: np.ndarray,
    c: np.ndarray,
    k: int,
    u: np.ndarray | None,
    w: np.ndarray | None,
) -> Rows:
    """Sort rows by (a, b, outcome, user), merge duplicates, drop zero counts."""
    # one array, updated in place: at a million rows each temporary is fresh memory
    key = a * k
    key += b
    key *= _N_OUTCOMES
    key += o
    n_users = 1 if u is None or len(u) == 0 else int(u.max()) + 1
    if u is not None:
        key *= n_users
        key += u
    n_keys = k * k * _N_OUTCOMES * n_users
    if n_keys <= max(4 * len(key), 1 << 16):
        summed = np.bincount(key, weights=c, minlength=n_keys)
        ukey = np.flatnonzero(summed)
        counts = summed[ukey].astype(np.int64)
        del summed
        weights = None if w is None else np.bincount(key, weights=w, minlength=n_keys)[ukey]
    else:
        ukey, inverse = np.unique(key, return_inverse=True)
        counts = np.bincount(inverse, weights=c, minlength=len(ukey)).astype(np.int64)
        weights = None if w is None else np.bincount(inverse, weights=w, minlength=len(ukey))
        keep = counts > 0
        ukey, counts = ukey[keep], counts[keep]
        weights = None if weights is None else weights[keep]
    a, b, o, users = np.unravel_index(ukey, (k, k, _N_OUTCOMES, n_users))
    return a, b, o, counts, None if u is None else users, weights


def _as_indices(names: Sequence[str] | np.ndarray, lookup: dict[str, int]) -> np.ndarray:
    arr = np.asarray(names)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    try:
        return np.fromiter((lookup[x] for x in arr.tolist()), dtype=np.int64, count=arr.size)
    except KeyError as exc:
        raise ValueError(f"model {exc.args[0]!r} is not in `models`") from None


def group_battles(
    model_a: Sequence[str] | np.ndarray,
    model_b: Sequence[str] | np.ndarray,
    outcome: Sequence[int] | np.ndarray,
    *,
    models: Sequence[str] | None = None,
    positions_known: bool = True,
    user: Sequence[int] | np.ndarray | None = None,
    weight: Sequence[float] | np.ndarray | None = None,
) -> GroupedCounts:
    """Group one-row-per-battle arrays into counts.

    ``model_a``/``model_b`` are model keys (top and bottom completion), or integer indices into
    ``models`` (then ``models`` is required; this is the fast path for simulated data).
    ``models`` fixes the model order and may include models without battles; by default it is
    the sorted set of keys seen. ``user`` (user index per battle) and ``weight`` (sampling
    weight per battle) are optional columns.
    """
    ma, mb = np.asarray(model_a), np.asarray(model_b)
    out = np.asarray(outcome)
    if not (ma.shape == mb.shape == out.shape) or ma.ndim != 1:
        raise ValueError("model_a, model_b and outcome must be 1-D and the same length")
    if out.size and out.dtype.kind not in "iu":
        if out.dtype.kind == "f" and np.all(out == np.round(out)):
            out = out.astype(np.int64)
        else:
            raise ValueError("outcome must hold integer codes")
    numeric = ma.dtype.kind in "iu" and mb.dtype.kind in "iu"
    if models is None:
        if numeric and ma.size:
            raise ValueError("integer model indices need `models`")
        models = sorted(set(ma.tolist()) | set(mb.tolist()))
    models = tuple(str(m) for m in models)
    lookup = {m: i for i, m in enumerate(models)}
    a = _as_indices(ma, lookup)
    b = _as_indices(mb, lookup)
    return GroupedCounts(
        models=models,
        a=a,
        b=b,
        outcome=out.astype(np.int64),
        count=np.ones(len(a), dtype=np.int64),
        positions_known=positions_known,
        user=None if user is None else np.asarray(user),
        weight=None if weight is None else np.asarray(weight, dtype=float),
    )


def from_count_rows(
    rows: Iterable[tuple[str, str, int, int]],
    *,
    positions_known: bool = True,
    models: Sequence[str] | None = None,
) -> GroupedCounts:
    """Build counts from ``(model_a, model_b, outcome, count)`` rows, e.g. a SQL ``GROUP BY``.

    Duplicate keys are summed and zero counts dropped. ``models`` (optional) fixes the order
    and may add models without battles; by default the sorted set of keys seen is used.
    """
    rows = list(rows)
    names_a = [r[0] for r in rows]
    names_b = [r[1] for r in rows]
    if models is None:
        models = sorted(set(names_a) | set(names_b))
    models = tuple(str(m) for m in models)
    lookup = {m: i for i, m in enumerate(models)}
    a = _as_indices(names_a, lookup)
    b = _as_indices(names_b, lookup)
    outcome = np.array([int(r[2]) for r in rows], dtype=np.int64)
    count = np.array([int(r[3]) for r in rows], dtype=np.int64)
    return GroupedCounts(
        models=models, a=a, b=b, outcome=outcome, count=count, positions_known=positions_known
    )


def from_user_count_rows(
    rows: Iterable[tuple[int, str, str, int, int]],
    *,
    positions_known: bool = True,
    models: Sequence[str] | None = None,
) -> GroupedCounts:
    """Counts with a user column from ``(user, model_a, model_b, outcome, count)`` rows.

    ``user`` is a non-negative integer index (e.g. a dense rank of the user id in SQL); this
    is the ``GROUP BY user, model_a, model_b, outcome`` that user-clustered intervals read.
    """
    rows = list(rows)
    base = from_count_rows(
        [(r[1], r[2], r[3], r[4]) for r in rows], positions_known=positions_known, models=models
    )
    if not rows:
        return replace(base, user=np.zeros(0, dtype=np.int64))
    lookup = {m: i for i, m in enumerate(base.models)}
    return GroupedCounts(
        models=base.models,
        a=np.array([lookup[r[1]] for r in rows], dtype=np.int64),
        b=np.array([lookup[r[2]] for r in rows], dtype=np.int64),
        outcome=np.array([int(r[3]) for r in rows], dtype=np.int64),
        count=np.array([int(r[4]) for r in rows], dtype=np.int64),
        positions_known=positions_known,
        user=np.array([int(r[0]) for r in rows], dtype=np.int64),
    )
