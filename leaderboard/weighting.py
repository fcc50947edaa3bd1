"""Vote weights of the overall board (RatingConfig.weights): none, inverse pair counts, or
inverse sampler propensities.

The weighted counts carry a ``weight`` column (the sum of the votes' weights per row,
``analysis.grouping``); the engine then maximises the weighted likelihood.

* ``pair_count`` needs only the counts the recompute already has (arena-rank's reweighting,
  ``analysis.weights.inverse_pair_count_weights``): it works on the maintained counts as they
  are.
* ``propensity`` needs each vote's stored sampler probability (``Battle.pair_probability``,
  copied at ingest from the served pair's log), which the maintained counts do not hold: it
  reads one GROUP BY over the battles, summing 1 / pi per cell (per user cell when the
  intervals are clustered). That is the recompute's only scan of all battles, and only while
  the option is on. A vote with no stored probability (a pair we did not serve, or served
  before probabilities were stored) weighs 1: the weight of a pair drawn uniformly, i.e. such
  votes count as they do unweighted. The weighted rows come from that scan, counts included,
  so counts and weights always describe the same battles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import connection

from analysis.grouping import GroupedCounts
from analysis.weights import inverse_pair_count_weights
from ingest.models import Battle

from . import incremental
from .aggregation import (
    _engine_outcomes,
    on_board,
    overall_by_user,
    user_indices,
    with_userless_apart,
)
from .count_tables import USER_KEY
from .influence import Influence, capped_counts
from .models import RatingConfig

# arena-rank's floor: a pair with fewer votes weighs as if it had this many.
MIN_PAIR_COUNT = 50


@dataclass(frozen=True)
class WeightedCounts:
    """What the overall board is fitted on, and what its weights were (for the page/API)."""

    counts: GroupedCounts
    label: str


def overall_counts(
    overall: GroupedCounts,
    keys: dict[int, str],
    *,
    weights: str,
    clustered: bool,
    user_groups: int | None = None,
    influence: Influence | None = None,
) -> WeightedCounts:
    """The overall board's fit input under ``weights`` (RatingConfig.Weights), split by user
    when ``clustered`` (users summed into ``user_groups`` groups when given), times the
    per-user influence bound when ``influence`` is active (leaderboard/influence.py)."""
    if influence is not None and influence.active:
        counts, label = capped_counts(
            overall, keys, weights=weights, clustered=clustered, influence=influence
        )
        return WeightedCounts(counts, label[:200])
    if weights == RatingConfig.Weights.PROPENSITY:
        return propensity_counts(overall, keys, clustered=clustered)
    rated = overall_by_user(overall, keys, groups=user_groups) if clustered else overall
    if weights == RatingConfig.Weights.PAIR_COUNT:
        return WeightedCounts(
            inverse_pair_count_weights(rated, min_pair_count=MIN_PAIR_COUNT),
            f"inverse pair count (every pair of models weighs the same; floor {MIN_PAIR_COUNT} "
            "votes)",
        )
    return WeightedCounts(rated, "none")


def propensity_counts(
    overall: GroupedCounts, keys: dict[int, str], *, clustered: bool
) -> WeightedCounts:
    """Counts of the models on ``overall`` weighted by 1 / (P pi) per vote (pi: the stored
    probability of its pair, P: the number of pairs of the board's models); 1 without pi.

    Per row the weight is SUM(1 / pi) / P + (votes without pi): the row sum of
    ``analysis.weights.inverse_propensity_weights`` over its votes.
    """
    table = Battle._meta.db_table
    user = (USER_KEY if incremental.enabled() else "user_hash") + ", "
    user = user if clustered else ""
    known = "CASE WHEN pair_probability > 0 THEN pair_probability END"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {user}model_a_id, model_b_id, outcome, COUNT(*), COUNT({known}), "
            f"SUM(1.0 / {known}) FROM {table} WHERE NOT excluded "
            f"GROUP BY {user}model_a_id, model_b_id, outcome"
        )
        rows = cursor.fetchall()
    cols = list(zip(*rows, strict=True)) if rows else [()] * (7 if clustered else 6)
    first = 1 if clustered else 0
    ia, ib, keep = on_board(overall, keys, cols[first], cols[first + 1])
    count = np.array(cols[first + 3], dtype=np.int64)[keep]
    with_pi = np.array(cols[first + 4], dtype=np.int64)[keep]
    # SUM over no stored probability is NULL: None -> nan -> 0.
    inverse = np.nan_to_num(np.array(cols[first + 5], dtype=float))[keep]
    k = overall.n_models
    n_pairs = k * (k - 1) / 2 if k > 1 else 1.0
    users = None
    userless = np.zeros(0, dtype=np.int64)
    if clustered:
        keys_of_users = np.array(cols[0], dtype=np.int64 if incremental.enabled() else object)
        users = user_indices(keys_of_users[keep])
        with connection.cursor() as cursor:
            none = incremental.userless_key(cursor) if incremental.enabled() else ""
        userless = users[keys_of_users[keep] == none]
    counts = GroupedCounts(
        models=overall.models,
        a=ia[keep],
        b=ib[keep],
        outcome=_engine_outcomes(cols[first + 2])[keep],
        count=count,
        positions_known=overall.positions_known,
        user=users,
        weight=inverse / n_pairs + (count - with_pi),
    )
    total, stored = int(count.sum()), int(with_pi.sum())
    return WeightedCounts(
        with_userless_apart(counts, userless),
        f"inverse sampler propensity ({stored:,} of {total:,} votes with a stored pair "
        "probability; the others weigh 1)",
    )
