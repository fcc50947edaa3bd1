"""Fast exact multinomial redraws of grouped counts, many rounds at once.

Computes, for counts ``c`` (M cells, N = sum c battles) and R rounds, an (R, M) integer array
whose rows are independent draws of Multinomial(N, c / N) -- the bootstrap resample of N
battles -- distributed exactly like ``numpy.random.Generator.multinomial``. One of three
exact methods, by the shape of the counts:

* **Direct** (N <= M): all N battles are drawn one by one (a uniform battle index looked up
  in the cumulative counts).
* **Poisson tables** (small counts, e.g. 1M battles over ~30,000 cells, where numpy's
  sequential binomials cost several times more per cell and round):

  1. Draw X_m ~ Poisson((1 - eps) c_m) independently (eps = 2 / sqrt(N)). Given their total
     S, X is Multinomial(S, c / N). Poisson draws use inversion with precomputed CDF and
     guide tables, shared by all cells with the same count, so one draw is a few vector
     operations.
  2. If S > N (probability ~2.5% per round) redraw that round; conditioning on the event
     {S <= N}, a function of S only, leaves X | S unchanged.
  3. Add N - S battles drawn from c / N (one by one, or by numpy's multinomial when there
     are many per cell). Multinomial(S, q) + Multinomial(N - S, q) = Multinomial(N, q).

* **Binomials** (everything else: few cells with large counts, like the ~165 categories of a
  board at millions of battles): numpy's own ``multinomial``, one exact binomial per cell and
  round, at a cost not growing with the counts. Tables would span ~20 standard deviations
  of each count (too many entries to build), and the top-up of step 3 grows like sqrt(N):
  N - S is ~2 sqrt(N) battles per round, so numpy's Poisson draws plus that top-up cost more
  than the binomials, the more the larger the arena (docs/performance.md, "The board fits").

The result depends only on the counts, R and the generator state.
"""

from __future__ import annotations

import numpy as np
from scipy.special import pdtr

__all__ = ["MultinomialSampler", "multinomial_counts"]

_EPS_SIGMAS = 2.0  # thinning in standard deviations of S: P(S > N) ~ 2.5%, redrawn
_TAIL_SIGMAS = 10.0  # Poisson tables span mean +- 10 sd (+ slack): tails below 1e-20
_LUT_MAX = 1 << 25  # battle-index lookup table up to 32M battles, searchsorted beyond
_CHUNK_ELEMENTS = 1 << 20
# Inversion tables only while they hold at most this many entries per cell: beyond, their
# set-up (a CDF entry per value within 10 sd) outweighs rounds of binomials.
_TABLE_ENTRIES_PER_CELL = 64
# A binomial redraw of a cell with more battles than this is zero with probability
# (1 - c / N)^N <= exp(-c) < 1e-20: treated as never zero, like a table starting above zero.
_NEVER_ZERO = 46


class _PoissonTables:
    """Inversion tables for Poisson(lam_v) for every distinct count value v.

    For table v: ``cdf`` over k = lo_v .. hi_v, and a guide of G_v = 2^j >= 4 * width bins
    (a power of two, so ``floor(u * G)`` is exact). A bin wholly inside one CDF step stores the
    answer (the count) directly; a bin holding a step stores ``-1 - i`` with ``i`` the table
    index to start walking up from. Most draws are one look-up.
    """

    def __init__(self, values: np.ndarray, scale: float) -> None:
        lam = values.astype(float) * scale
        sd = np.sqrt(lam)
        lo = np.maximum(0, np.floor(lam - _TAIL_SIGMAS * sd - 10)).astype(np.int64)
        hi = np.ceil(lam + _TAIL_SIGMAS * sd + 12).astype(np.int64)
        width = hi - lo + 1
        foff = np.concatenate([[0], np.cumsum(width)[:-1]])
        table_of = np.repeat(np.arange(len(values)), width)
        k = np.arange(width.sum()) - np.repeat(foff, width) + np.repeat(lo, width)
        cdf = pdtr(k.astype(float), lam[table_of])
        cdf[foff + width - 1] = 1.0  # u < 1 always lands inside the table
        self.cdf = cdf
        self.base = foff - lo  # table index of value k is base + k
        self.lowest = lo
        n_guide = 2 ** np.ceil(np.log2(4 * width)).astype(np.int64)
        goff = np.concatenate([[0], np.cumsum(n_guide)[:-1]])
        guide = np.empty(int(n_guide.sum()), dtype=np.int64)
        if cdf.size >= np.iinfo(np.int32).max:
            raise ValueError("count table too large")
        for v in range(len(values)):  # exact per-table searches (few distinct counts)
            f = cdf[foff[v] : foff[v] + width[v]]
            edges = np.arange(n_guide[v] + 1) / n_guide[v]  # exact: power-of-two denominators
            first = np.searchsorted(f, edges[:-1], side="right")  # smallest i: cdf > b / G
            pure = f[first] >= edges[1:]
            guide[goff[v] : goff[v] + n_guide[v]] = np.where(
                pure, first + lo[v], -1 - (first + foff[v])
            )
        self.guide = guide.astype(np.int32)  # half the cache footprint of int64
        self.n_guide = n_guide.astype(float)
        self.goff = goff

    def prepare(self, table: np.ndarray) -> None:
        """Per-cell lookups for cells using tables ``table`` (one table id per cell)."""
        self._g = self.n_guide[table]
        self._goff = self.goff[table]
        self._base = self.base[table]

    def draw(self, rounds: int, rng: np.random.Generator) -> np.ndarray:
        """(rounds, cells) Poisson draws for the prepared cells."""
        m = len(self._g)
        u = rng.random((rounds, m))
        g = (u * self._g).astype(np.int64)
        g += self._goff
        out = np.take(self.guide, g).astype(np.int64)
        pos = np.flatnonzero(out < 0)
        if len(pos):  # bins with a CDF step inside: walk up from the step
            flat, uu = out.reshape(-1), u.reshape(-1)[pos]
            idx = -1 - flat[pos]
            walk = np.flatnonzero(self.cdf[idx] <= uu)
            while len(walk):
                idx[walk] += 1
                walk = walk[self.cdf[idx[walk]] <= uu[walk]]
            flat[pos] = idx - self._base[pos % m]
        return np.asarray(out)


def _battle_lookup(counts: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    cum = np.cumsum(counts)
    lut = np.repeat(np.arange(len(counts)), counts) if cum[-1] <= _LUT_MAX else None
    return lut, cum


def _cells_of(battles: np.ndarray, lut: np.ndarray | None, cum: np.ndarray) -> np.ndarray:
    if lut is not None:
        return np.asarray(lut[battles])
    return np.searchsorted(cum, battles, side="right")


class MultinomialSampler:
    """Draws rounds of Multinomial(N, counts / N) as (rounds, M) int64 arrays.

    Set up once per count vector (tables, lookups); each :meth:`draw` call consumes the
    generator deterministically, so the same seed and the same sequence of calls reproduce
    the same counts.
    """

    def __init__(self, counts: np.ndarray) -> None:
        counts = np.asarray(counts, dtype=np.int64).ravel()
        if np.any(counts < 0):
            raise ValueError("counts must be non-negative")
        self.counts = counts
        self.m, self.total = len(counts), int(counts.sum())
        self.direct = False
        self._tables: _PoissonTables | None = None
        if self.total == 0:
            return
        eps = _EPS_SIGMAS / np.sqrt(self.total)
        self.direct = self.total <= self.m or eps >= 0.5
        # The top-up of step 3 draws ~2 sqrt(N) battles per round: a look-up table of all N
        # battles pays only when every battle is drawn (the direct path).
        self._lut: np.ndarray | None = None
        self._cum: np.ndarray = np.cumsum(counts)
        if self.direct:
            self._lut, self._cum = _battle_lookup(counts)
            return
        values, table = np.unique(counts, return_inverse=True)
        sd = np.sqrt(values * (1.0 - eps))
        entries = float(np.sum(2.0 * (_TAIL_SIGMAS * sd + 11.0) + 1.0))
        if entries <= _TABLE_ENTRIES_PER_CELL * self.m:
            self._tables = _PoissonTables(values, 1.0 - eps)
            self._tables.prepare(table)
            self._table = table
        else:
            self._p = counts / self.total

    def can_be_zero(self) -> np.ndarray:
        """Bool per cell: can a redraw leave this cell at zero? (False only for cells whose
        Poisson table starts above zero, or whose binomial is zero with probability below
        1e-20: counts of a few dozen to a few hundred or more.)"""
        if self.total == 0 or self.direct:
            return np.ones(self.m, dtype=bool)
        if self._tables is not None:
            return np.asarray(self._tables.lowest[self._table] == 0)
        return np.asarray(self.counts <= _NEVER_ZERO)

    def draw(self, rounds: int, rng: np.random.Generator) -> np.ndarray:
        """(rounds, M) int64: ``rounds`` independent redraws."""
        out = np.zeros((rounds, self.m), dtype=np.int64)
        if rounds == 0 or self.total == 0:
            return out
        per_round = self.total if self.direct else self.m
        step = max(1, _CHUNK_ELEMENTS // max(per_round, 1))
        for start in range(0, rounds, step):
            rc = min(step, rounds - start)
            if self.direct:
                out[start : start + rc] = self._draw_direct(rc, rng)
            elif self._tables is not None:
                out[start : start + rc] = self._draw_poisson(rc, rng)
            else:
                out[start : start + rc] = rng.multinomial(self.total, self._p, size=rc)
        return out

    def _draw_direct(self, rounds: int, rng: np.random.Generator) -> np.ndarray:
        m, total = self.m, self.total
        cells = _cells_of(rng.integers(0, total, size=(rounds, total)), self._lut, self._cum)
        cells += (np.arange(rounds) * m)[:, None]
        return np.bincount(cells.ravel(), minlength=rounds * m).reshape(rounds, m)

    def _draw_poisson(self, rounds: int, rng: np.random.Generator) -> np.ndarray:
        m, total = self.m, self.total
        if self._tables is None:
            raise RuntimeError("the Poisson draw has its tables")
        x = self._tables.draw(rounds, rng)
        sums = x.sum(axis=1)
        while np.any(sums > total):
            redo = np.flatnonzero(sums > total)
            x[redo] = self._tables.draw(len(redo), rng)
            sums[redo] = x[redo].sum(axis=1)
        missing = total - sums
        if missing.sum() > rounds * m:
            # Many battles to add per round (large N over few cells): numpy's multinomial,
            # one binomial per cell, instead of a look-up per battle.
            return x + rng.multinomial(missing, self.counts / total)
        cells = _cells_of(rng.integers(0, total, size=int(missing.sum())), self._lut, self._cum)
        cells += np.repeat(np.arange(rounds) * m, missing)
        x += np.bincount(cells, minlength=rounds * m).reshape(rounds, m)
        return x


def multinomial_counts(counts: np.ndarray, rounds: int, rng: np.random.Generator) -> np.ndarray:
    """(rounds, M) int64 array; each row ~ Multinomial(sum(counts), counts / sum(counts)).

    Same distribution (and shape) as ``rng.multinomial(N, counts / N, size=rounds)``.
    """
    return MultinomialSampler(counts).draw(rounds, rng)
