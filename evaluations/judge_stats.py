"""Win and tie rates of judged questions, with bootstrap intervals, and the judge's position bias.

* **Rates** (``analysis.codearena.win_rates``): each question judged twice is a win, tie or
  loss for the model; win rate = wins / N and tie rate = ties / N, overall and per category.
  Questions whose games could not be played (no model or baseline answer) are left out and
  counted in `JudgeSummary.not_judged`.
* **Intervals**: percentile bootstrap over questions. Resampling N questions with replacement
  and counting outcomes is the same as one multinomial draw of N with the observed outcome
  shares, so each round is one draw of three counts (exact, and independent of N's size).
* **Position bias**: a question "disagrees" when the two orders point different ways: the sign
  of the model's score in game 1 differs from that in game 2 (one says the model is better,
  the other says worse or equal). Only questions with a verdict in both games count. The share
  of decisive games won by whichever answer was shown first (A) is also reported: 0.5 for a
  judge without preference for a position.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from analysis.codearena import JudgedQuestion, Verdict, WinRate, game_score, win_rates

from .judge import JudgedItem

_A_WINS = frozenset({Verdict.A_MUCH_BETTER, Verdict.A_BETTER})
_B_WINS = frozenset({Verdict.B_MUCH_BETTER, Verdict.B_BETTER})


@dataclass(frozen=True)
class Rate:
    """A rate and its bootstrap interval (NaN when there are no questions)."""

    value: float
    low: float
    high: float


@dataclass(frozen=True)
class Outcomes:
    n: int
    wins: int
    ties: int
    losses: int
    win_rate: Rate
    tie_rate: Rate


@dataclass(frozen=True)
class PositionBias:
    pairs: int  # questions with a verdict in both games
    disagreements: int
    decisive_games: int
    first_position_wins: int

    @property
    def disagreement_rate(self) -> float:
        return self.disagreements / self.pairs if self.pairs else math.nan

    @property
    def first_position_share(self) -> float:
        return self.first_position_wins / self.decisive_games if self.decisive_games else math.nan


@dataclass(frozen=True)
class JudgeSummary:
    overall: Outcomes
    per_category: dict[str, Outcomes] = field(default_factory=dict)
    position_bias: PositionBias = PositionBias(0, 0, 0, 0)
    no_verdict_games: int = 0
    not_judged: int = 0


def _interval(
    counts: WinRate, *, rounds: int, level: float, rng: np.random.Generator
) -> tuple[Rate, Rate]:
    if counts.n == 0:
        nan = Rate(math.nan, math.nan, math.nan)
        return nan, nan
    shares = np.array([counts.wins, counts.ties, counts.losses], dtype=float) / counts.n
    draws = rng.multinomial(counts.n, shares, size=rounds) / counts.n
    tail = (1.0 - level) / 2.0 * 100.0
    bounds = np.percentile(draws[:, :2], [tail, 100.0 - tail], axis=0)
    return (
        Rate(counts.win_rate, float(bounds[0, 0]), float(bounds[1, 0])),
        Rate(counts.tie_rate, float(bounds[0, 1]), float(bounds[1, 1])),
    )


def _outcomes(counts: WinRate, *, rounds: int, level: float, rng: np.random.Generator) -> Outcomes:
    win, tie = _interval(counts, rounds=rounds, level=level, rng=rng)
    return Outcomes(counts.n, counts.wins, counts.ties, counts.losses, win, tie)


def position_bias(questions: Iterable[JudgedQuestion]) -> PositionBias:
    pairs = disagreements = decisive = first = 0
    for q in questions:
        for verdict in (q.game1, q.game2):
            if verdict in _A_WINS or verdict in _B_WINS:
                decisive += 1
                first += verdict in _A_WINS
        if q.game1 is None or q.game2 is None:
            continue
        pairs += 1
        one = game_score(q.game1, model_position="B")
        two = game_score(q.game2, model_position="A")
        disagreements += np.sign(one) != np.sign(two)
    return PositionBias(pairs, int(disagreements), decisive, first)


def summarize(
    items: Iterable[JudgedItem | JudgedQuestion],
    *,
    rounds: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> JudgeSummary:
    """Rates overall and per category with ``level`` bootstrap intervals (``rounds`` draws)."""
    judged: list[JudgedQuestion] = []
    not_judged = 0
    for item in items:
        question = item.judged if isinstance(item, JudgedItem) else item
        if question is None:
            not_judged += 1
        else:
            judged.append(question)
    rates = win_rates(judged)
    rng = np.random.default_rng(seed)
    return JudgeSummary(
        overall=_outcomes(rates.overall, rounds=rounds, level=level, rng=rng),
        per_category={
            name: _outcomes(counts, rounds=rounds, level=level, rng=rng)
            for name, counts in rates.per_category.items()
        },
        position_bias=position_bias(judged),
        no_verdict_games=sum((q.game1 is None) + (q.game2 is None) for q in judged),
        not_judged=not_judged,
    )
