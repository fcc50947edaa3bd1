"""Per-user outlier score of the Chatbot Arena vote-hygiene test, on grouped counts.

For each vote, p is the rate at which *other* users chose the same outcome for the same
pair of models (the winner's identity, or a tie; positions ignored). A user whose choices
are rare gets a large product of 1/(2p) over their votes: with p = 1/2 (a coin flip) a
vote contributes 1, an outcome nobody else chose contributes a lot. Chatbot Arena flags
users with at least 5 votes whose product exceeds 20. We work with the log of the product,
leave the user's own votes out of p (so one prolific user cannot make their own choices
look common), skip votes on pairs nobody else voted on, and clip p at `p_floor` so a
single unanimous pair cannot dominate.

Inputs are counts per (user, pair, choice): `pair` is any integer id of the unordered pair
of models, `choice` an integer outcome code within the pair (e.g. 0 = lower id won,
1 = higher id won, 2 = tie). Rows that repeat a (user, pair, choice) -- e.g. one per
top/bottom order, as a database grouping by the ordered pair returns them -- are merged
first (`merge_counts`): leaving out "this row" instead of "this user's votes in the cell"
would count a user's own votes among what others chose, and a one-sided voter would look
more ordinary the more it votes. Votes that express no preference between the two models
(an edit battle's "both bad") are not choices here; callers leave them out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class OutlierScores:
    user: np.ndarray  # user index, one row per scored user
    votes: np.ndarray  # votes that entered the score
    log_score: np.ndarray  # sum over votes of log(1 / (2 p))

    def flagged(self, *, min_votes: int = 5, threshold: float = 20.0) -> np.ndarray:
        return np.asarray((self.votes >= min_votes) & (self.log_score > np.log(threshold)))


def merge_counts(
    user: np.ndarray, pair: np.ndarray, choice: np.ndarray, count: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One row per (user, pair, choice) with the summed count."""
    keys = np.stack([np.asarray(x, dtype=np.int64) for x in (user, pair, choice)], axis=1)
    unique, idx = np.unique(keys, axis=0, return_inverse=True)
    summed = np.bincount(idx.ravel(), weights=np.asarray(count, dtype=np.float64))
    return unique[:, 0], unique[:, 1], unique[:, 2], summed


def outlier_scores(
    user: np.ndarray,
    pair: np.ndarray,
    choice: np.ndarray,
    count: np.ndarray,
    *,
    p_floor: float = 0.01,
) -> OutlierScores:
    user, pair, choice = (np.asarray(x, dtype=np.int64) for x in (user, pair, choice))
    count = np.asarray(count, dtype=np.float64)
    if user.size == 0:
        empty = np.zeros(0)
        return OutlierScores(empty.astype(np.int64), empty.astype(np.int64), empty)
    user, pair, choice, count = merge_counts(user, pair, choice, count)
    n_choice = int(choice.max()) + 1
    cell = pair * n_choice + choice
    _cells, cell_idx = np.unique(cell, return_inverse=True)
    _pairs, pair_idx = np.unique(pair, return_inverse=True)
    cell_total = np.bincount(cell_idx, weights=count)
    pair_total = np.bincount(pair_idx, weights=count)
    # Everyone's counts minus this user's own votes in the same cell / pair.
    own_pair = _own_pair_counts(user, pair_idx, count)
    others_choice = cell_total[cell_idx] - count
    others_pair = pair_total[pair_idx] - own_pair
    usable = others_pair > 0
    p = np.where(usable, others_choice / np.where(usable, others_pair, 1), 1.0)
    p = np.clip(p, p_floor, 1.0)
    contrib = np.where(usable, count * np.log(1.0 / (2.0 * p)), 0.0)
    users, user_idx = np.unique(user, return_inverse=True)
    return OutlierScores(
        user=users,
        votes=np.bincount(user_idx, weights=np.where(usable, count, 0.0)).astype(np.int64),
        log_score=np.bincount(user_idx, weights=contrib),
    )


def _own_pair_counts(user: np.ndarray, pair_idx: np.ndarray, count: np.ndarray) -> np.ndarray:
    """For each row, this user's total votes on this row's pair."""
    key = user * (int(pair_idx.max()) + 1) + pair_idx
    _keys, idx = np.unique(key, return_inverse=True)
    return np.bincount(idx, weights=count)[idx]
