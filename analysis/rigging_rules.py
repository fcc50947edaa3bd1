"""Anomaly rules on a simulated arena's votes: today's product rules and the proposed ones.

Computes per-user flags (one bool per user index) from the vote arrays of
``analysis.simulate_rigging.RiggedArena``, so the rigging benchmark can measure who is flagged
without a database.

``today_flags`` re-implements the rules of ``moderation/anomalies.py`` as they are (they read
the ORM, so they cannot run here), with their default settings: the daily cap, the top-slot
share, the outlier test fed one row per (user, top, bottom, outcome) with "both bad" scored as
a tie, IP bursts and the inhuman pace rule (implausible latencies are not simulated).

``new_flags`` are the proposed rules: the outlier test on the counts it is defined on (one row
per user, unordered pair and choice; "both bad" left out), and two rules aimed at rigging:

* presence: a user's votes involving one model, against the share a uniform server gives it
  (2 / K): a target-only rigger votes only where it sees the target. A one-sided binomial
  z-score, the largest over models.
* affinity: the wins a user gives one model against the rate at which the other users chose
  it in the same pairs (leave-the-user-out), as a z-score, the largest over models.

plus the unchanged pace, daily cap and IP burst rules. A user is flagged when any rule fires.

Presence and affinity are computed by ``analysis.rigging_scores``, which the product's anomaly
scan (``moderation/anomalies.py``) runs too, there with the other users' share of each day as
presence's reference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.grouping import OUTCOME_A, OUTCOME_B
from analysis.outliers import outlier_scores
from analysis.rigging_scores import user_scores
from analysis.simulate_rigging import RiggedArena

__all__ = ["NewThresholds", "new_flags", "today_flags", "user_z_scores"]

# the vote arrays the rules read
Votes = RiggedArena

DAILY_CAP = 200
TOP_SLOT_MIN_VOTES, TOP_SLOT_SHARE = 20, 0.95
OUTLIER_MIN_VOTES, OUTLIER_THRESHOLD = 5, 20.0
IP_BURST_VOTES = 60
MIN_VOTE_GAP_SECONDS, PACE_MIN_VOTES = 2.0, 10
KIND_COMPLETION = 0


@dataclass(frozen=True)
class NewThresholds:
    """The proposed rules' settings (the defaults are the measured ones, docs/ratings.md, and
    the product's: ANOMALY_PRESENCE_Z, ANOMALY_AFFINITY_Z, ANOMALY_RIGGING_MIN_VOTES)."""

    z: float = 4.5  # presence and affinity z-scores
    min_votes: int = 10
    outlier_threshold: float = OUTLIER_THRESHOLD


def _per_user(users: np.ndarray, n_users: int) -> np.ndarray:
    flags = np.zeros(n_users, dtype=bool)
    flags[np.asarray(users, dtype=np.int64)] = True
    return flags


def _daily_cap(v: Votes) -> np.ndarray:
    day = (v.time // 86_400).astype(np.int64)
    keys, n = np.unique(np.stack([v.user, day], axis=1), axis=0, return_counts=True)
    return _per_user(keys[n > DAILY_CAP, 0], v.n_users)


def _top_slot(v: Votes) -> np.ndarray:
    done = v.kind == KIND_COMPLETION
    n = np.bincount(v.user[done], minlength=v.n_users)
    top = np.bincount(v.user[done & (v.outcome == OUTCOME_A)], minlength=v.n_users)
    return np.asarray((n >= TOP_SLOT_MIN_VOTES) & (top >= TOP_SLOT_SHARE * np.maximum(n, 1)))


def _pace(v: Votes) -> np.ndarray:
    flags = np.zeros(v.n_users, dtype=bool)
    order = np.lexsort((v.time, v.user))
    user, time = v.user[order], v.time[order]
    starts = np.flatnonzero(np.r_[True, user[1:] != user[:-1]])
    for lo, hi in zip(starts, np.r_[starts[1:], len(user)], strict=True):
        if hi - lo >= PACE_MIN_VOTES:
            flags[user[lo]] = float(np.median(np.diff(time[lo:hi]))) < MIN_VOTE_GAP_SECONDS
    return flags


def _ip_burst(v: Votes) -> np.ndarray:
    minute = (v.time // 60).astype(np.int64)
    keys, n = np.unique(np.stack([v.ip, minute], axis=1), axis=0, return_counts=True)
    bursting = np.unique(keys[n > IP_BURST_VOTES, 0])
    return _per_user(v.user[np.isin(v.ip, bursting)], v.n_users)


def _pair_choice(v: Votes) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = np.minimum(v.a, v.b), np.maximum(v.a, v.b)
    winner = np.where(v.outcome == OUTCOME_A, v.a, np.where(v.outcome == OUTCOME_B, v.b, -1))
    choice = np.where(winner == -1, 2, np.where(winner == lo, 0, 1))
    return lo * (int(hi.max()) + 1) + hi, choice


def outlier_today(v: Votes, *, threshold: float = OUTLIER_THRESHOLD) -> np.ndarray:
    """moderation/anomalies.py's outlier rule: one row per (user, top, bottom, outcome)."""
    rows, n = np.unique(np.stack([v.user, v.a, v.b, v.outcome], axis=1), axis=0, return_counts=True)
    user, a, b, outcome = rows.T
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    winner = np.where(outcome == OUTCOME_A, a, np.where(outcome == OUTCOME_B, b, -1))
    choice = np.where(winner == -1, 2, np.where(winner == lo, 0, 1))
    s = outlier_scores(user, lo * (int(hi.max()) + 1) + hi, choice, n)
    flagged = s.flagged(min_votes=OUTLIER_MIN_VOTES, threshold=threshold)
    return _per_user(s.user[flagged], v.n_users)


def outlier_merged(v: Votes, *, threshold: float, min_votes: int = OUTLIER_MIN_VOTES) -> np.ndarray:
    """The outlier test on counts per (user, unordered pair, winner), decisive votes only: a
    tie or "both bad" is a rare answer, not a rare opinion about the pair."""
    pair, choice = _pair_choice(v)
    keep = v.outcome <= OUTCOME_B
    rows, n = np.unique(
        np.stack([v.user[keep], pair[keep], choice[keep]], axis=1), axis=0, return_counts=True
    )
    s = outlier_scores(rows[:, 0], rows[:, 1], rows[:, 2], n)
    return _per_user(s.user[s.flagged(min_votes=min_votes, threshold=threshold)], v.n_users)


def user_z_scores(v: Votes, *, n_models: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per user: votes, the largest presence z-score and the largest affinity z-score
    (``analysis.rigging_scores``, the product's implementation, with a uniform server)."""
    s = user_scores(v.user, v.a, v.b, v.outcome, n_users=v.n_users, n_models=n_models)
    return s.votes, s.presence, s.affinity


def today_flags(v: Votes) -> dict[str, np.ndarray]:
    """The product's rules as they are, by rule name."""
    return {
        "daily_cap": _daily_cap(v),
        "top_slot": _top_slot(v),
        "outlier": outlier_today(v),
        "ip_burst": _ip_burst(v),
        "inhuman_pace": _pace(v),
    }


def new_flags(v: Votes, *, n_models: int, t: NewThresholds | None = None) -> dict[str, np.ndarray]:
    """The proposed rules, by rule name (see the module docstring)."""
    t = t or NewThresholds()
    s = user_scores(v.user, v.a, v.b, v.outcome, n_users=v.n_users, n_models=n_models)
    presence, affinity = s.flagged(z=t.z, min_votes=t.min_votes)
    return {
        "daily_cap": _daily_cap(v),
        "outlier_merged": outlier_merged(v, threshold=t.outlier_threshold),
        "presence": presence,
        "affinity": affinity,
        "ip_burst": _ip_burst(v),
        "inhuman_pace": _pace(v),
    }
