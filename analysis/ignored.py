"""Ignored pairs: completion pairs that were shown but never voted on.

A pair is *shown* when both ``/add_completion`` logs arrived, and *ignored* when no vote
followed within the window the caller chose. Today such pairs are discarded. This module
computes, from counts per (top model, bottom model) of shown and ignored pairs:

* :func:`ignored_rates`: the ignored rate per model (over every shown pair it was in) and per
  pair (both positions together), NaN where nothing was shown; a model whose completions are
  ignored far more often than others' is a problem (slow, empty, or off-topic) that the
  votes alone hide;
* :func:`add_ignored_as_ties`: the "ignored counts as both-bad" board variant -- every ignored
  pair added to the grouped counts as a tie (``OUTCOME_TIE``, which already covers "both
  bad"). It pulls the two models of an ignored pair towards each other; a board built this
  way must say so, as it answers another question ("which model gets taken at all").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from analysis.grouping import OUTCOME_TIE, GroupedCounts

__all__ = ["IgnoredRates", "add_ignored_as_ties", "ignored_rates"]


@dataclass(frozen=True)
class IgnoredRates:
    """Shown and ignored counts and rates, per model and per (unordered) pair."""

    models: tuple[str, ...]
    shown: np.ndarray  # per model
    ignored: np.ndarray
    rate: np.ndarray  # ignored / shown, NaN where never shown
    pair_shown: np.ndarray  # (K, K) symmetric
    pair_ignored: np.ndarray
    pair_rate: np.ndarray

    @property
    def overall(self) -> float:
        """Share of all shown pairs that were ignored (NaN if none was shown)."""
        total = self.pair_shown.sum() / 2
        return float(self.pair_ignored.sum() / 2 / total) if total else float("nan")


def _pair_matrix(k: int, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    m = np.bincount(a * k + b, weights=c, minlength=k * k).reshape(k, k)
    return m + m.T


def ignored_rates(
    models: Sequence[str],
    *,
    a: np.ndarray,
    b: np.ndarray,
    shown: np.ndarray,
    ignored: np.ndarray,
) -> IgnoredRates:
    """Rates from per-row (top index ``a``, bottom index ``b``) shown and ignored counts."""
    k = len(models)
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    sh, ig = np.asarray(shown, dtype=float), np.asarray(ignored, dtype=float)
    if np.any(ig > sh) or np.any(ig < 0) or np.any(a == b):
        raise ValueError("ignored must be between 0 and shown, and a != b")
    pair_shown = _pair_matrix(k, a, b, sh)
    pair_ignored = _pair_matrix(k, a, b, ig)
    with np.errstate(invalid="ignore", divide="ignore"):
        pair_rate = np.where(pair_shown > 0, pair_ignored / pair_shown, np.nan)
        per_shown = pair_shown.sum(axis=1)
        per_ignored = pair_ignored.sum(axis=1)
        rate = np.where(per_shown > 0, per_ignored / per_shown, np.nan)
    return IgnoredRates(
        models=tuple(models),
        shown=per_shown.astype(np.int64),
        ignored=per_ignored.astype(np.int64),
        rate=rate,
        pair_shown=pair_shown.astype(np.int64),
        pair_ignored=pair_ignored.astype(np.int64),
        pair_rate=pair_rate,
    )


def add_ignored_as_ties(
    counts: GroupedCounts,
    *,
    a: np.ndarray,
    b: np.ndarray,
    ignored: np.ndarray,
    user: np.ndarray | None = None,
) -> GroupedCounts:
    """``counts`` plus every ignored pair as a tie (top ``a``, bottom ``b`` model indices).

    Counts with a user column need the user of each ignored row (``user``)."""
    if counts.user is not None and user is None:
        raise ValueError("counts carry users: give the user of each ignored row")
    n = len(np.asarray(ignored))
    users = None
    if counts.user is not None:
        users = np.concatenate([counts.user, np.asarray(user, dtype=np.int64)])
    weight = None
    if counts.weight is not None:
        weight = np.concatenate([counts.weight, np.asarray(ignored, dtype=float)])
    return GroupedCounts(
        models=counts.models,
        a=np.concatenate([counts.a, np.asarray(a, dtype=np.int64)]),
        b=np.concatenate([counts.b, np.asarray(b, dtype=np.int64)]),
        outcome=np.concatenate([counts.outcome, np.full(n, OUTCOME_TIE)]),
        count=np.concatenate([counts.count, np.asarray(ignored, dtype=np.int64)]),
        positions_known=counts.positions_known,
        user=users,
        weight=weight,
    )
