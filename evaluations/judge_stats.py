"""CodeArena win and tie rates of judged questions, with bootstrap intervals, and the judge's position bias.

* **Rates** (``analysis.codearena.win_rates``, the seed's rule): a question scores the number
  of its two games the model won, over 2; the win rate is the mean of that over questions, the
  tie rate likewise from tied games, overall and per category. Questions whose games could
  not be played (no model or baseline answer) are left out and counted in
  `JudgeSummary.not_judged`. The Arena-Hard summed score is kept as a secondary figure
  (`JudgeSummary.arena_hard`, overall only).
* **Intervals**: percentile bootstrap over questions. A question is one of a few kinds (games
  won, games tied), so resampling N questions with replacement is one multinomial draw of N
  over the observed kinds' shares: each round is one draw (exact, and independent of N's
  size). With fewer than two questions there is no interval (NaN bounds).
* **Position bias**: a question "disagrees" when the two orders point different ways: the sign
  of the model's score in game 1 differs from that in game 2 (one says the model is better,
  the other says worse or equal). Only questions with a verdict in both games count. The share
  of decisive games won by whichever answer was shown first (A) is also reported: 0.5 for a
  judge without preference for a position.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from analysis.codearena import (
    JudgedQuestion,
    SummedRate,
    Verdict,
    WinRate,
    arena_hard_rates,
    by_category,
    game_score,
    tally,
)

from .judge import JudgedItem

_A_WINS = frozenset({Verdict.A_MUCH_BETTER, Verdict.A_BETTER})
_B_WINS = frozenset({Verdict.B_MUCH_BETTER, Verdict.B_BETTER})


@dataclass(frozen=True)
class Rate:
    """A rate and its bootstrap interval (NaN bounds with fewer than two questions)."""

    value: float
    low: float
    high: float


@dataclass(frozen=True)
class Outcomes:
    counts: WinRate
    win_rate: Rate
    tie_rate: Rate

    @property
    def n(self) -> int:
        return self.counts.n


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
    arena_hard: SummedRate = field(default_factory=lambda: SummedRate(0, 0, 0, 0))


def _outcomes(
    questions: list[JudgedQuestion], *, rounds: int, level: float, rng: np.random.Generator
) -> Outcomes:
    counts = tally(questions)
    if counts.n < 2:
        return Outcomes(
            counts,
            Rate(counts.win_rate, math.nan, math.nan),
            Rate(counts.tie_rate, math.nan, math.nan),
        )
    kinds = Counter((q.wins, q.ties) for q in questions)
    values = np.array(list(kinds), dtype=float) / 2.0  # per kind: (wins / 2, ties / 2)
    shares = np.array(list(kinds.values()), dtype=float) / counts.n
    draws = rng.multinomial(counts.n, shares, size=rounds) @ values / counts.n
    tail = (1.0 - level) / 2.0 * 100.0
    bounds = np.percentile(draws, [tail, 100.0 - tail], axis=0)
    return Outcomes(
        counts,
        Rate(counts.win_rate, float(bounds[0, 0]), float(bounds[1, 0])),
        Rate(counts.tie_rate, float(bounds[0, 1]), float(bounds[1, 1])),
    )


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
    rng = np.random.default_rng(seed)
    return JudgeSummary(
        overall=_outcomes(judged, rounds=rounds, level=level, rng=rng),
        per_category={
            name: _outcomes(group, rounds=rounds, level=level, rng=rng)
            for name, group in by_category(judged).items()
        },
        position_bias=position_bias(judged),
        no_verdict_games=sum((q.game1 is None) + (q.game2 is None) for q in judged),
        not_judged=not_judged,
        arena_hard=arena_hard_rates(judged),
    )
