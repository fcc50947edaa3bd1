"""CodeArena-style offline evaluation: judge verdicts and swapped-order win rates.

Scoring rules (reference README, section 7):

* **Judge verdicts.** A judge's answer ends with one label among ``[[A>>B]]``,
  ``[[A>B]]``, ``[[A=B]]``, ``[[B>A]]``, ``[[B>>A]]``. ``parse_verdict`` finds them with a
  regex (spaces inside the brackets tolerated); no label, or two *different* labels in one
  answer, means no verdict (``None``). Repeating the same label is still that label.
* **Two games per question.** Game 1 shows the baseline as A and the evaluated model as
  B; game 2 swaps them. Each game is won, tied or lost from the *model's* side (a strong label
  counts like a weak one; a game without a verdict is neither won nor tied).
* **CodeArena win rate** (the seed's ``score_win_rate``): per question, ``wins`` = the number of
  the two games the model wins and the question scores ``wins / 2``; the win rate is that
  score averaged over questions, the tie rate likewise from tied games, overall and per task
  category. A question won in one order and lost in the other is half a win; a judge that
  always answers "A" gives 50%.
* **Arena-Hard summed score** (secondary, `arena_hard_rates`): each game scored +2/+1/0/-1/-2
  from the model's side, the two summed, > 0 a win, 0 a tie, < 0 a loss; wins / N. Arena-Hard's
  convention, not CodeArena's: a strong label outweighs a weak opposite one there.

pass@k and the EvalPlus and MultiPL-E result files: ``analysis.pass_at_k``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

# ------------------------------------------------------------------ judge verdicts


class Verdict(StrEnum):
    """A judge's verdict label, from the point of view of position A vs position B."""

    A_MUCH_BETTER = "A>>B"
    A_BETTER = "A>B"
    TIE = "A=B"
    B_BETTER = "B>A"
    B_MUCH_BETTER = "B>>A"


# ">>" before ">" inside each alternative so "A>>B" is never read as "A>B".
_VERDICT_RE = re.compile(r"\[\[\s*(A\s*>>\s*B|A\s*>\s*B|A\s*=\s*B|B\s*>>\s*A|B\s*>\s*A)\s*\]\]")

# Score of each verdict for the model sitting in position B; position A is the negation.
_SCORE_AS_B = {
    Verdict.A_MUCH_BETTER: -2,
    Verdict.A_BETTER: -1,
    Verdict.TIE: 0,
    Verdict.B_BETTER: 1,
    Verdict.B_MUCH_BETTER: 2,
}

GameOutcome = Literal["win", "tie", "loss", "no_verdict"]
SummedOutcome = Literal["win", "tie", "loss"]
# A question's outcome under the seed's rule: how many of its two games the model won.
QUESTION_OUTCOMES = ("won_none", "won_one", "won_both")


def parse_verdict(judgment: str | None) -> Verdict | None:
    """The verdict label in a judge's answer, or ``None`` if absent or conflicting."""
    if not judgment:
        return None
    labels = {re.sub(r"\s+", "", match) for match in _VERDICT_RE.findall(judgment)}
    if len(labels) != 1:
        return None
    return Verdict(labels.pop())


def game_score(verdict: Verdict | None, *, model_position: Literal["A", "B"]) -> int:
    """Signed score of one game from the evaluated model's side (+2 .. -2; no verdict is 0)."""
    if model_position not in ("A", "B"):
        raise ValueError(f"model_position must be 'A' or 'B', got {model_position!r}")
    if verdict is None:
        return 0
    score = _SCORE_AS_B[Verdict(verdict)]
    return score if model_position == "B" else -score


def game_outcome(verdict: Verdict | None, *, model_position: Literal["A", "B"]) -> GameOutcome:
    """One game won, tied or lost by the model (a strong label is a win like a weak one)."""
    score = game_score(verdict, model_position=model_position)
    if verdict is None:
        return "no_verdict"
    return "win" if score > 0 else "loss" if score < 0 else "tie"


def arena_hard_score(game1: Verdict | None, game2: Verdict | None) -> int:
    """Arena-Hard's summed score of the two games (game 1: model is B; game 2: model is A)."""
    return game_score(game1, model_position="B") + game_score(game2, model_position="A")


def arena_hard_outcome(score: int) -> SummedOutcome:
    return "win" if score > 0 else "loss" if score < 0 else "tie"


@dataclass(frozen=True)
class JudgedQuestion:
    """One question judged twice against the baseline (game 2 has the order swapped)."""

    game1: Verdict | None
    game2: Verdict | None
    category: str | None = None
    question_id: str | None = None

    @classmethod
    def from_judgments(
        cls,
        game1_judgment: str | None,
        game2_judgment: str | None,
        *,
        category: str | None = None,
        question_id: str | None = None,
    ) -> JudgedQuestion:
        """Build from the judge's raw answers for the two games."""
        return cls(
            game1=parse_verdict(game1_judgment),
            game2=parse_verdict(game2_judgment),
            category=category,
            question_id=question_id,
        )

    @property
    def games(self) -> tuple[GameOutcome, GameOutcome]:
        return (
            game_outcome(self.game1, model_position="B"),
            game_outcome(self.game2, model_position="A"),
        )

    @property
    def wins(self) -> int:
        """Games the model won (0, 1 or 2)."""
        return self.games.count("win")

    @property
    def ties(self) -> int:
        return self.games.count("tie")

    @property
    def score(self) -> float:
        """The seed's question score: ``wins / 2``."""
        return self.wins / 2.0

    @property
    def outcome(self) -> str:
        """``won_none``, ``won_one`` or ``won_both``."""
        return QUESTION_OUTCOMES[self.wins]

    @property
    def arena_hard_score(self) -> int:
        return arena_hard_score(self.game1, self.game2)


@dataclass(frozen=True)
class WinRate:
    """The CodeArena rates over ``n`` questions, from their ``2n`` games (NaN when ``n`` is 0).

    ``win_rate`` = games won / 2n, which is the mean of the questions' ``wins / 2``."""

    n: int
    games_won: int
    games_tied: int
    games_lost: int

    @property
    def games_without_verdict(self) -> int:
        return 2 * self.n - self.games_won - self.games_tied - self.games_lost

    @property
    def win_rate(self) -> float:
        return self.games_won / (2 * self.n) if self.n else math.nan

    @property
    def tie_rate(self) -> float:
        return self.games_tied / (2 * self.n) if self.n else math.nan

    @property
    def loss_rate(self) -> float:
        return self.games_lost / (2 * self.n) if self.n else math.nan


@dataclass(frozen=True)
class SummedRate:
    """Arena-Hard's counts over ``n`` questions: a question won, tied or lost by its sum."""

    n: int
    wins: int
    ties: int
    losses: int

    @property
    def win_rate(self) -> float:
        return self.wins / self.n if self.n else math.nan

    @property
    def tie_rate(self) -> float:
        return self.ties / self.n if self.n else math.nan


@dataclass(frozen=True)
class WinRateSummary:
    overall: WinRate
    per_category: dict[str, WinRate] = field(default_factory=dict)
    """Only questions with a category; sorted by category name."""


def tally(questions: Iterable[JudgedQuestion]) -> WinRate:
    """The CodeArena counts of some judged questions."""
    judged = list(questions)
    games = [game for q in judged for game in q.games]
    return WinRate(
        n=len(judged),
        games_won=games.count("win"),
        games_tied=games.count("tie"),
        games_lost=games.count("loss"),
    )


def by_category(questions: Iterable[JudgedQuestion]) -> dict[str, list[JudgedQuestion]]:
    """Questions with a category, grouped by it, sorted by category name."""
    groups: dict[str, list[JudgedQuestion]] = {}
    for question in questions:
        if question.category is not None:
            groups.setdefault(question.category, []).append(question)
    return {name: groups[name] for name in sorted(groups)}


def win_rates(questions: Iterable[JudgedQuestion]) -> WinRateSummary:
    """CodeArena win and tie rates of the evaluated model against the baseline."""
    judged = list(questions)
    return WinRateSummary(
        overall=tally(judged),
        per_category={name: tally(group) for name, group in by_category(judged).items()},
    )


def arena_hard_rates(questions: Iterable[JudgedQuestion]) -> SummedRate:
    """The secondary Arena-Hard figure: questions won, tied, lost by their summed score."""
    outcomes = [arena_hard_outcome(q.arena_hard_score) for q in questions]
    return SummedRate(
        n=len(outcomes),
        wins=outcomes.count("win"),
        ties=outcomes.count("tie"),
        losses=outcomes.count("loss"),
    )
