"""Reads for the compare page: two public models head to head on the published overall board."""

from __future__ import annotations

import math

import numpy as np

from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE
from analysis.scale import win_probability

from . import selectors

Z95 = 1.959963984540054


def wilson_interval(*, successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion (ties count half a success, as on the board)."""
    if n <= 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def predicted_win_rate(*, rating_a: float, rating_b: float) -> float:
    """Bradley-Terry on the board's 400-point scale: P(a beats b)."""
    return win_probability(rating_a, rating_b)


def head_to_head(*, a: str, b: str) -> dict[str, object] | None:
    """Battles, observed score with a 95% Wilson interval and predicted win rate of a over b.

    None when either model is not on the published overall board.
    """
    data = selectors.board()
    if data is None:
        return None
    rows = {m["model"]: m for m in data["models"]}
    if a not in rows or b not in rows:
        return None
    wins = losses = ties = 0
    counts = selectors.overall_counts()
    if counts is not None and a in counts.models and b in counts.models:
        ia, ib = counts.models.index(a), counts.models.index(b)
        top_a = (counts.a == ia) & (counts.b == ib)
        top_b = (counts.a == ib) & (counts.b == ia)
        o, c = counts.outcome, counts.count

        def total(mask: np.ndarray) -> int:
            return int(c[mask].sum())

        wins = total(top_a & (o == OUTCOME_A)) + total(top_b & (o == OUTCOME_B))
        losses = total(top_a & (o == OUTCOME_B)) + total(top_b & (o == OUTCOME_A))
        ties = total((top_a | top_b) & (o == OUTCOME_TIE))
    n = wins + losses + ties
    score = wins + 0.5 * ties
    lower, upper = wilson_interval(successes=score, n=n)
    ra, rb = rows[a], rows[b]
    return {
        "a": ra,
        "b": rb,
        "battles": n,
        "wins": wins,
        "losses": losses,
        "ties": ties,
        "observed": score / n if n else None,
        "observed_lower": lower if n else None,
        "observed_upper": upper if n else None,
        "predicted": None
        if ra["rating"] is None or rb["rating"] is None
        else predicted_win_rate(rating_a=ra["rating"], rating_b=rb["rating"]),
        "has_latency": any(r.get("latency_p50_ms") is not None for r in (ra, rb)),
    }
