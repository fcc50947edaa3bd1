"""A finished run's headline score and summary, from its stored items.

The same reports as the pure suites compute (``infilling.report``, ``judge_stats.summarize``,
``analysis.pass_at_k.greedy_pass_at_1``), rebuilt from the items' stored outcomes, issues
and verdicts; rates in % (``None`` where undefined), intervals as ``[value, low, high]``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from analysis.codearena import Verdict
from analysis.pass_at_k import greedy_pass_at_1

from . import infilling as inf
from . import judge as jd
from .judge_stats import JudgeSummary, Outcomes, Rate
from .judge_stats import summarize as judge_summary
from .models import EvaluationItem, EvaluationRun, Suite


def _rate(value: float) -> float | None:
    return None if value != value else 100.0 * value  # NaN -> None


def _interval(rate: Rate) -> list[float | None]:
    return [_rate(rate.value), _rate(rate.low), _rate(rate.high)]


def _outcomes(o: Outcomes) -> dict[str, Any]:
    """One row of the CodeArena table: questions, games by result, the two rates; the
    interval bounds are None with fewer than two questions."""
    return {
        "n": o.n,
        "games_won": o.counts.games_won,
        "games_tied": o.counts.games_tied,
        "games_lost": o.counts.games_lost,
        "games_without_verdict": o.counts.games_without_verdict,
        "win_rate": _interval(o.win_rate),
        "tie_rate": _interval(o.tie_rate),
    }


def _judge_dict(s: JudgeSummary) -> dict[str, Any]:
    bias = s.position_bias
    summed = s.arena_hard
    return {
        "overall": _outcomes(s.overall),
        "per_category": {k: _outcomes(v) for k, v in sorted(s.per_category.items())},
        "position_bias": {
            "pairs": bias.pairs,
            "disagreements": bias.disagreements,
            "disagreement_rate": _rate(bias.disagreement_rate),
            "decisive_games": bias.decisive_games,
            "first_position_wins": bias.first_position_wins,
            "first_position_share": _rate(bias.first_position_share),
        },
        "no_verdict_games": s.no_verdict_games,
        "not_judged": s.not_judged,
        # Secondary: Arena-Hard's summed signed scores, not CodeArena's rule.
        "arena_hard": {
            "n": summed.n,
            "wins": summed.wins,
            "ties": summed.ties,
            "losses": summed.losses,
            "win_rate": _rate(summed.win_rate),
        },
    }


def _stored_game(data: dict[str, Any] | None, position: str) -> jd.Game | None:
    if not data:
        return None
    verdict = Verdict(data["verdict"]) if data.get("verdict") else None
    return jd.Game("A" if position == "A" else "B", verdict)


def stored_judgement(row: EvaluationItem) -> jd.JudgedItem:
    """A CodeArena item's two games as stored (no games: the question was not judged)."""
    return jd.JudgedItem(
        question_id=row.item_key,
        category=row.details.get("category") or None,
        model_answer=row.raw_output or None,
        baseline_answer=None,
        game1=_stored_game(row.details.get("game1"), "B"),
        game2=_stored_game(row.details.get("game2"), "A"),
    )


def summarize(
    run: EvaluationRun, items: Iterable[EvaluationItem]
) -> tuple[float | None, dict[str, Any]]:
    """The run's headline score in % (None when nothing could be scored) and its summary."""
    rows = list(items)
    statuses = dict(Counter(r.outcome for r in rows))
    if run.suite == Suite.HUMANEVAL:
        pass1 = greedy_pass_at_1(bool(r.passed) for r in rows)
        return _rate(pass1), {"pass_at_1": _rate(pass1), "n": len(rows), "statuses": statuses}
    if run.suite == Suite.INFILLING:
        report = inf.report(
            inf.InfillResult(
                task_id=r.item_key,
                status=r.outcome,
                raw_output=r.raw_output,
                middle=r.extracted if r.well_formatted is not None else None,
                issues=tuple(r.details.get("issues", ())),
            )
            for r in rows
        )
        chat = str(run.provider_settings.get("kind")) == "openai_chat"
        return _rate(report.pass_at_1), {
            "pass_at_1": _rate(report.pass_at_1),
            "well_formatted_rate": _rate(report.well_formatted_rate),
            "answered": sum(r.well_formatted is not None for r in rows),
            "n": len(rows),
            "issues": report.issues,
            "statuses": statuses,
            "template": "chat (snippet-and-trim prompt)" if chat else "native FiM endpoint",
        }
    summary = judge_summary(stored_judgement(r) for r in rows)
    return _rate(summary.overall.win_rate.value), {**_judge_dict(summary), "statuses": statuses}
