"""A finished run's headline score and summary, from its stored items.

The same reports as the pure suites compute (``infilling.report``, ``judge_stats.summarize``,
``analysis.codearena.greedy_pass_at_1``), rebuilt from the items' stored outcomes, issues
and verdicts; rates in % (``None`` where undefined), intervals as ``[value, low, high]``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from analysis.codearena import Verdict, greedy_pass_at_1

from . import infilling as inf
from . import judge as jd
from .judge_stats import JudgeSummary, Outcomes
from .judge_stats import summarize as judge_summary
from .models import EvaluationItem, EvaluationRun, Suite


def _rate(value: float) -> float | None:
    return None if value != value else 100.0 * value  # NaN -> None


def _outcomes(o: Outcomes) -> dict[str, Any]:
    return {
        "n": o.n,
        "wins": o.wins,
        "ties": o.ties,
        "losses": o.losses,
        "win_rate": [_rate(o.win_rate.value), _rate(o.win_rate.low), _rate(o.win_rate.high)],
        "tie_rate": [_rate(o.tie_rate.value), _rate(o.tie_rate.low), _rate(o.tie_rate.high)],
    }


def _judge_dict(s: JudgeSummary) -> dict[str, Any]:
    bias = s.position_bias
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
    }


def _stored_game(data: dict[str, Any] | None, position: str) -> jd.Game | None:
    if not data:
        return None
    verdict = Verdict(data["verdict"]) if data.get("verdict") else None
    return jd.Game("A" if position == "A" else "B", verdict)


def summarize(run: EvaluationRun, items: Iterable[EvaluationItem]) -> tuple[float | None, dict]:
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
    judged = [
        jd.JudgedItem(
            question_id=r.item_key,
            category=r.details.get("category") or None,
            model_answer=r.raw_output or None,
            baseline_answer=None,
            game1=_stored_game(r.details.get("game1"), "B"),
            game2=_stored_game(r.details.get("game2"), "A"),
        )
        for r in rows
    ]
    summary = judge_summary(judged)
    return _rate(summary.overall.win_rate.value), {**_judge_dict(summary), "statuses": statuses}
