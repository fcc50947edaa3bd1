"""Per-account rigging scores, presence and affinity: the one implementation of both.

Used by the rigging simulation (``analysis.rigging_rules``, measured by
``benchmarks/bench_rigging.py``) and by the product's anomaly scan (``moderation/anomalies.py``),
so the figures the simulation measures are those of the rules the product runs.

The input is one row per vote, or per group of identical votes with a ``count``: the user's
index, the two models' indices (top, bottom) and the outcome (``OUTCOME_A`` / ``OUTCOME_B``;
any other outcome is not a choice between the two).

* presence: the votes of a user that involve one model against the share of served battles
  that involve it. A uniform server shows each model in 2 / K of its battles; a target-only
  rigger votes only where it sees the target. With ``period`` given, the reference is instead
  the share of the other users' votes of the same period that involve the model (a server that
  is not uniform, or models that come and go, move that share for everyone alike). A
  one-sided binomial z-score, the largest over models.
* affinity: the wins a user gives one model against the rate at which the other users chose it
  in the same pairs (leave-the-user-out), as a z-score, the largest over models.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.grouping import OUTCOME_A, OUTCOME_B

__all__ = ["PERIOD_PRIOR_VOTES", "UserScores", "user_scores"]

# Weight, in votes, of the whole window's share in a period's reference share: a period the
# other users barely voted in is judged against the window rather than against a few votes.
PERIOD_PRIOR_VOTES = 20.0
# Variance floor of a z-score's denominator: a model the others never chose (or never saw)
# would otherwise make one vote infinitely surprising.
MIN_VARIANCE = 0.25


@dataclass(frozen=True)
class UserScores:
    """Per user index: votes, the largest presence and affinity z-scores, and the model each
    largest score is about."""

    votes: np.ndarray
    presence: np.ndarray
    presence_model: np.ndarray
    affinity: np.ndarray
    affinity_model: np.ndarray

    def flagged(self, *, z: float, min_votes: int) -> tuple[np.ndarray, np.ndarray]:
        """Boolean per user: (presence, affinity) at or above ``z`` with ``min_votes`` votes."""
        enough = self.votes >= min_votes
        return enough & (self.presence >= z), enough & (self.affinity >= z)


def _presence_reference(
    user: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    count: np.ndarray,
    period: np.ndarray,
    *,
    n_users: int,
    n_models: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Expected presence per (user, model) and its variance, from the other users' share of
    each period the user voted in, shrunk towards their share over the whole window."""
    nu, k = n_users, n_models
    votes = np.bincount(user, weights=count, minlength=nu)
    present = np.zeros((nu, k))
    np.add.at(present, (user, a), count)
    np.add.at(present, (user, b), count)
    others_n = votes.sum() - votes
    window = present.sum(axis=0)[None, :] - present
    window_share = np.where(
        others_n[:, None] > 0, window / np.maximum(others_n, 1)[:, None], 2.0 / k
    )
    keys, slot = np.unique(np.stack([user, period], axis=1), axis=0, return_inverse=True)
    slot = slot.ravel()
    slot_n = np.bincount(slot, weights=count, minlength=len(keys))
    slot_present = np.zeros((len(keys), k))
    np.add.at(slot_present, (slot, a), count)
    np.add.at(slot_present, (slot, b), count)
    periods, period_idx = np.unique(keys[:, 1], return_inverse=True)
    period_idx = period_idx.ravel()
    period_n = np.bincount(period_idx, weights=slot_n, minlength=len(periods))
    period_present = np.zeros((len(periods), k))
    np.add.at(period_present, period_idx, slot_present)
    slot_user = keys[:, 0]
    others_present = period_present[period_idx] - slot_present
    others_votes = (period_n[period_idx] - slot_n)[:, None]
    share = (others_present + PERIOD_PRIOR_VOTES * window_share[slot_user]) / (
        others_votes + PERIOD_PRIOR_VOTES
    )
    share = np.clip(share, 0.0, 1.0)
    expected = np.zeros((nu, k))
    variance = np.zeros((nu, k))
    np.add.at(expected, slot_user, slot_n[:, None] * share)
    np.add.at(variance, slot_user, slot_n[:, None] * share * (1 - share))
    return expected, np.maximum(variance, MIN_VARIANCE)


def user_scores(
    user: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    outcome: np.ndarray,
    *,
    n_users: int,
    n_models: int,
    count: np.ndarray | None = None,
    period: np.ndarray | None = None,
) -> UserScores:
    """Presence and affinity per user (see the module docstring). ``period`` (an integer per
    row, e.g. the UTC day) replaces the uniform server's share 2 / K by the other users' share
    of the same period."""
    nu, k = n_users, n_models
    if k < 2:  # no pairs, nothing to score
        zeros, none = np.zeros(nu), np.zeros(nu, dtype=np.int64)
        return UserScores(zeros, zeros, none, zeros, none)
    user = np.asarray(user, dtype=np.int64)
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    outcome = np.asarray(outcome)
    w = np.ones(len(user)) if count is None else np.asarray(count, dtype=float)
    votes = np.bincount(user, weights=w, minlength=nu)
    present = np.zeros((nu, k))
    np.add.at(present, (user, a), w)
    np.add.at(present, (user, b), w)
    if period is None:
        q = 2.0 / k
        expected_present = votes[:, None] * q
        variance_present = np.maximum(votes, 1)[:, None] * q * (1 - q)
    else:
        expected_present, variance_present = _presence_reference(
            user, a, b, w, np.asarray(period, dtype=np.int64), n_users=nu, n_models=k
        )
    presence = (present - expected_present) / np.sqrt(variance_present)

    decisive = outcome <= OUTCOME_B
    u, da, db, dw = user[decisive], a[decisive], b[decisive], w[decisive]
    win = np.where(outcome[decisive] == OUTCOME_A, da, db)
    lose = np.where(win == da, db, da)
    # crowd's rate of each model winning each ordered (model, opponent) cell, user left out
    cell = np.zeros((k, k))
    np.add.at(cell, (win, lose), dw)
    # the user's own (winner, loser) counts, kept sparse: users times models squared is large
    own_keys, own_idx = np.unique((u * k + win) * k + lose, return_inverse=True)
    own_counts = np.bincount(own_idx.ravel(), weights=dw, minlength=len(own_keys))

    def own(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        key = (u * k + x) * k + y
        if len(own_keys) == 0:
            return np.zeros(len(key))
        at = np.minimum(np.searchsorted(own_keys, key), len(own_keys) - 1)
        return np.where(own_keys[at] == key, own_counts[at], 0.0)

    expected = np.zeros((nu, k))
    variance = np.zeros((nu, k))
    wins = np.zeros((nu, k))
    np.add.at(wins, (u, win), dw)
    for m_side, o_side in ((da, db), (db, da)):
        others_m = cell[m_side, o_side] - own(m_side, o_side)
        others_o = cell[o_side, m_side] - own(o_side, m_side)
        total = others_m + others_o
        p = np.where(total > 0, others_m / np.maximum(total, 1), 0.5)
        np.add.at(expected, (u, m_side), dw * p)
        np.add.at(variance, (u, m_side), dw * p * (1 - p))
    affinity = (wins - expected) / np.sqrt(np.maximum(variance, MIN_VARIANCE))
    return UserScores(
        votes=votes,
        presence=presence.max(axis=1),
        presence_model=presence.argmax(axis=1),
        affinity=affinity.max(axis=1),
        affinity_model=affinity.argmax(axis=1),
    )
