"""The per-user influence bound of the overall board (RatingConfig.user_cap_day,
user_cap_total, dedup_contexts), combined with the board's vote weights.

Each vote's weight is ``analysis.weights.influence_weights`` of its user's votes: a user's
votes on one identical context (``Battle.context_hash``) share a weight of 1, a user's weight
on one UTC day is capped at ``user_cap_day`` and in total at ``user_cap_total`` (scaled down
alike); a user below the caps keeps weight 1 per vote. It multiplies the board's weights
(none, inverse pair count, inverse propensity). Battles without a user are not one user's and
are never capped. The caps count all of a user's non-excluded votes, on the board or not.

Per-user caps need per-user, per-day counts that the maintained count tables do not have, so
like the propensity weights this reads one GROUP BY over the battles (window sums per user,
day and context, then one row per (user, A, B, outcome) with its count and weight sums): the
recompute's one scan of all battles while the bound is on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import connection

from analysis.grouping import GroupedCounts
from ingest.models import Battle

from . import incremental
from .aggregation import _engine_outcomes, on_board, user_indices, with_userless_apart
from .count_tables import USER_KEY
from .models import RatingConfig

# arena-rank's floor, as in weighting.py
MIN_PAIR_COUNT = 50


@dataclass(frozen=True)
class Influence:
    """The bound's settings; 0 turns a cap off."""

    cap_day: int = 0
    cap_total: int = 0
    dedup: bool = False

    @classmethod
    def of(cls, config: RatingConfig) -> Influence:
        return cls(config.user_cap_day, config.user_cap_total, config.dedup_contexts)

    @property
    def active(self) -> bool:
        return bool(self.cap_day or self.cap_total or self.dedup)

    def label(self) -> str:
        parts = ["repeated contexts once"] if self.dedup else []
        if self.cap_day:
            parts.append(f"<= {self.cap_day}/day")
        if self.cap_total:
            parts.append(f"<= {self.cap_total} in all")
        return "per-user bound: " + ", ".join(parts)

    def params(self) -> list[bool | float]:
        """The query's parameters, in the order of their placeholders."""
        day, total = float(self.cap_day), float(self.cap_total)
        return [self.dedup, day, day, day, total, total, total]


def _sql(user_column: str) -> str:
    """The scan. Window partitions use a 64-bit key of the user (k) rather than the
    64-character pseudonym: it sorts several times faster; a collision would only cap two
    users together. The day and total windows share one sort order (k, day)."""
    table = Battle._meta.db_table
    mine = "user_hash <> ''"
    key = USER_KEY if connection.vendor == "postgresql" else "user_hash"
    return f"""
    WITH v AS (
        SELECT {user_column} AS u, {key} AS k, {mine} AS mine, model_a_id, model_b_id,
            outcome, CASE WHEN pair_probability > 0 THEN pair_probability END AS pi,
            DATE(received_at) AS day, context_hash
        FROM {table} WHERE NOT excluded
    ), c AS (
        SELECT *, CASE WHEN %s AND mine AND context_hash <> ''
                THEN 1.0 / COUNT(*) OVER (PARTITION BY k, context_hash)
                ELSE 1.0 END AS w0
        FROM v
    ), d AS (
        SELECT *, SUM(w0) OVER (PARTITION BY k, day) AS s0 FROM c
    ), d1 AS (
        SELECT *, w0 * CASE WHEN %s > 0 AND mine AND s0 > %s THEN %s / s0 ELSE 1.0 END AS w1
        FROM d
    ), t AS (
        SELECT *, SUM(w1) OVER (PARTITION BY k) AS s1 FROM d1
    ), t1 AS (
        SELECT *, w1 * CASE WHEN %s > 0 AND mine AND s1 > %s THEN %s / s1 ELSE 1.0 END AS w
        FROM t
    )
    SELECT u, model_a_id, model_b_id, outcome, COUNT(*), SUM(w),
        COALESCE(SUM(w / pi), 0), COALESCE(SUM(CASE WHEN pi IS NULL THEN w END), 0), COUNT(pi)
    FROM t1 GROUP BY u, model_a_id, model_b_id, outcome
    """  # noqa: S608 -- table and column names from the models; values are parameters


def _pair_factor(counts: GroupedCounts) -> np.ndarray:
    """Per row 1 / max(votes of its pair, floor): the inverse pair count weight of a vote."""
    k = counts.n_models
    key = np.minimum(counts.a, counts.b) * k + np.maximum(counts.a, counts.b)
    n_pair = np.bincount(key, weights=counts.count, minlength=k * k)[key]
    return np.asarray(1.0 / np.maximum(n_pair, MIN_PAIR_COUNT))


def capped_counts(
    overall: GroupedCounts,
    keys: dict[int, str],
    *,
    weights: str,
    clustered: bool,
    influence: Influence,
) -> tuple[GroupedCounts, str]:
    """The overall board's fit input with the influence bound times ``weights``, split by
    user when ``clustered``; and the label of what the weights were."""
    user_column = (USER_KEY if incremental.enabled() else "user_hash") if clustered else "0"
    with connection.cursor() as cursor:
        cursor.execute(_sql(user_column), influence.params())
        rows = cursor.fetchall()
        none = incremental.userless_key(cursor) if incremental.enabled() else ""
    cols = list(zip(*rows, strict=True)) if rows else [()] * 9
    ia, ib, keep = on_board(overall, keys, cols[1], cols[2])
    count = np.array(cols[4], dtype=np.int64)[keep]
    capped = np.array(cols[5], dtype=float)[keep]
    k = overall.n_models
    if weights == RatingConfig.Weights.PROPENSITY:
        n_pairs = k * (k - 1) / 2 if k > 1 else 1.0
        weight = np.array(cols[6], dtype=float)[keep] / n_pairs + np.array(cols[7], float)[keep]
    else:
        weight = capped
    users, userless = None, np.zeros(0, dtype=np.int64)
    if clustered:
        keys_of_users = np.array(cols[0], dtype=np.int64 if incremental.enabled() else object)
        users = user_indices(keys_of_users[keep])
        userless = users[keys_of_users[keep] == none]
    counts = GroupedCounts(
        models=overall.models,
        a=ia[keep],
        b=ib[keep],
        outcome=_engine_outcomes(cols[3])[keep],
        count=count,
        positions_known=overall.positions_known,
        user=users,
        weight=weight,
    )
    if weights == RatingConfig.Weights.PAIR_COUNT:
        counts = counts.with_weight(counts.row_weight() * _pair_factor(counts))
    total = int(count.sum())
    label = _weights_label(weights, int(np.array(cols[8], dtype=np.int64)[keep].sum()), total)
    bound = f"{influence.label()} ({float(capped.sum()):,.0f} of {total:,} votes' weight kept)"
    return with_userless_apart(counts, userless), f"{label}; {bound}"


def _weights_label(weights: str, stored: int, total: int) -> str:
    if weights == RatingConfig.Weights.PROPENSITY:
        return (
            f"inverse sampler propensity ({stored:,} of {total:,} votes with a stored pair "
            "probability; the others weigh 1)"
        )
    if weights == RatingConfig.Weights.PAIR_COUNT:
        return f"inverse pair count (every pair of models weighs the same; floor {MIN_PAIR_COUNT})"
    return "none"
