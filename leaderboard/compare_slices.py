"""The compare page's per-slice head to head: two models' record within each value of the
task type, programming language and context length dimensions.

One GROUP BY over the battles between the two models (by the three slice columns) gives
wins, losses and ties of A within every combination of values; each dimension is then a sum
over those rows. Battles count as on the board: excluded ones are left out, merged keys
count for the model they were merged into, both-bad counts as a tie, and only battles
received up to the published snapshot's publication are read, so the page stays a function
of the snapshot it is cached under (leaderboard.page_cache) apart from exclusions made
since. A value is shown when the two models fought at least ARENA_COMPARE_MIN_VOTES battles
in it; the others are only counted. The predicted win rate is that value's published board's,
when the value has a board and both models are on it.
"""

from __future__ import annotations

from collections import defaultdict
from functools import partial

from django.conf import settings
from django.db.models import Count, Q

from catalogue.models import ArenaModel
from catalogue.selectors import merge_targets
from ingest.models import Battle, Outcome

from . import selectors
from .aggregation import DIMENSIONS
from .compare import predicted_win_rate, wilson_interval
from .slice_labels import value_label, value_order

# The dimensions compared, in the page's order (headings from aggregation.DIMENSIONS).
COMPARE_DIMENSIONS: tuple[str, ...] = ("task_type", "language", "context_bucket")


def _ids_by_key(keys: list[str]) -> dict[str, list[int]]:
    """Each model's id with the ids of the keys merged into it (their battles count for it)."""
    targets = merge_targets()
    own = dict(ArenaModel.objects.filter(key__in=keys).values_list("key", "id"))
    return {key: [pk for pk, t in targets.items() if t == own[key]] for key in own}


def slice_records(
    *, ids_a: list[int], ids_b: list[int], snapshot_id: int
) -> list[tuple[str, str, str, int, int, int]]:
    """(task_type, language, context_bucket, wins of A, losses, ties) per combination of
    values with a battle between A (`ids_a`) and B: the one GROUP BY."""
    published = selectors.snapshot_published_at(snapshot_id=snapshot_id)
    a_top = Q(model_a_id__in=ids_a, model_b_id__in=ids_b)
    b_top = Q(model_a_id__in=ids_b, model_b_id__in=ids_a)
    battles = Battle.objects.filter(a_top | b_top, excluded=False)
    if published is not None:
        battles = battles.filter(received_at__lte=published)
    tie = Q(outcome__in=(Outcome.TIE, Outcome.BOTH_BAD))
    rows = (
        battles.values(*COMPARE_DIMENSIONS)
        .annotate(
            wins=Count(
                "pk", filter=(a_top & Q(outcome=Outcome.A)) | (b_top & Q(outcome=Outcome.B))
            ),
            losses=Count(
                "pk", filter=(a_top & Q(outcome=Outcome.B)) | (b_top & Q(outcome=Outcome.A))
            ),
            ties=Count("pk", filter=tie),
        )
        .order_by()
    )
    return [
        (r["task_type"], r["language"], r["context_bucket"], r["wins"], r["losses"], r["ties"])
        for r in rows
    ]


def _predicted(*, dimension: str, value: str, a: str, b: str, snapshot_id: int) -> float | None:
    data = selectors.board(category=f"{dimension}:{value}", snapshot_id=snapshot_id)
    if data is None:
        return None
    rows = {m["model"]: m for m in data["models"]}
    if a not in rows or b not in rows:
        return None
    rating_a, rating_b = rows[a]["rating"], rows[b]["rating"]
    if rating_a is None or rating_b is None:
        return None
    return predicted_win_rate(rating_a=rating_a, rating_b=rating_b)


def _record(dimension: str, value: str, wins: int, losses: int, ties: int) -> dict[str, object]:
    """One value's record between the two models, with a's observed win rate and its 95%
    Wilson interval."""
    n = wins + losses + ties
    score = wins + 0.5 * ties
    lower, upper = wilson_interval(successes=score, n=n)
    return {
        "value": value,
        "label": value_label(dimension, value),
        "category": f"{dimension}:{value}",
        "battles": n,
        "wins": wins,
        "losses": losses,
        "ties": ties,
        "observed": score / n,
        "observed_lower": lower,
        "observed_upper": upper,
    }


def per_slice(*, a: str, b: str) -> list[dict[str, object]]:
    """Per dimension: the values with enough battles between a and b (record, observed win
    rate of a with its 95% Wilson interval, predicted rate from the value's board) and how
    many values had fewer. Empty while nothing is published."""
    sid = selectors.published_snapshot_id()
    if sid is None:
        return []
    ids = _ids_by_key([a, b])
    if a not in ids or b not in ids:
        return []
    minimum = settings.ARENA_COMPARE_MIN_VOTES
    totals: dict[str, dict[str, list[int]]] = {
        d: defaultdict(lambda: [0, 0, 0]) for d in COMPARE_DIMENSIONS
    }
    records = slice_records(ids_a=ids[a], ids_b=ids[b], snapshot_id=sid)
    for *values, wins, losses, ties in records:
        for dimension, value in zip(COMPARE_DIMENSIONS, values, strict=True):
            cell = totals[dimension][value]
            cell[0] += wins
            cell[1] += losses
            cell[2] += ties
    out: list[dict[str, object]] = []
    for dimension in COMPARE_DIMENSIONS:
        shown: list[dict[str, object]]
        shown, fewer = [], 0
        by_value = totals[dimension]
        for value in sorted(by_value, key=partial(value_order, dimension)):
            wins, losses, ties = by_value[value]
            if wins + losses + ties < minimum:
                fewer += 1
                continue
            record = _record(dimension, value, wins, losses, ties)
            shown.append(
                {
                    **record,
                    "predicted": _predicted(
                        dimension=dimension, value=value, a=a, b=b, snapshot_id=sid
                    ),
                }
            )
        out.append(
            {
                "dimension": dimension,
                "label": DIMENSIONS[dimension],
                "values": shown,
                "fewer": fewer,
                "min_battles": minimum,
            }
        )
    return out
