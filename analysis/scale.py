"""The rating scale every board is shown on, in one place.

P(A beats B) = 1 / (1 + 10 ** ((R_B - R_A) / 400)): 400 points for tenfold odds, the scale
Chatbot Arena and Copilot Arena publish, with a board's ratings centred on 1000. The engine
works in natural log-odds; SCALE turns them into points.
"""

from __future__ import annotations

import math
from typing import TypeVar, cast

import numpy as np

POINTS_PER_DECADE = 400.0
"""Rating points between two models whose odds differ tenfold."""

BASE = 10.0

CENTRE = 1000.0
"""A board's mean rating (or its anchor model's), unless configured otherwise."""

SCALE = POINTS_PER_DECADE / math.log(BASE)
"""Rating points per unit of natural log-odds."""

LOG_ODDS_PER_POINT = math.log(BASE) / POINTS_PER_DECADE
"""Natural log-odds per rating point (1 / SCALE, as the simulations multiply by it)."""

Ratings = TypeVar("Ratings", float, np.ndarray)


def win_probability(rating_a: Ratings, rating_b: Ratings) -> Ratings:
    """P(a beats b) from ratings on this scale (numbers or numpy arrays, broadcast)."""
    return cast(Ratings, 1.0 / (1.0 + BASE ** ((rating_b - rating_a) / POINTS_PER_DECADE)))
