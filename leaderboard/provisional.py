"""Public models the overall board does not rank yet (fewer votes than its minimum): listed
in a provisional section under the board with the votes they have, so that a public model
with a page always has a place on the board too."""

from __future__ import annotations

from typing import Any

from django.db.models import Count

from catalogue.models import ArenaModel, Visibility
from ingest.models import Battle

from .models import RatingConfig


def provisional_models(*, ranked: set[str]) -> list[dict[str, Any]]:
    """Public, unmerged models not in `ranked` (the board's keys), most votes first."""
    waiting = list(
        ArenaModel.objects.filter(visibility=Visibility.PUBLIC, merged_into__isnull=True)
        .exclude(key__in=ranked)
        .order_by("key")
    )
    if not waiting:
        return []
    ids = [m.pk for m in waiting]
    counted = Battle.objects.filter(excluded=False)
    as_a = dict(
        counted.filter(model_a_id__in=ids)
        .values_list("model_a_id")
        .annotate(n=Count("id"))
        .values_list("model_a_id", "n")
    )
    as_b = dict(
        counted.filter(model_b_id__in=ids)
        .values_list("model_b_id")
        .annotate(n=Count("id"))
        .values_list("model_b_id", "n")
    )
    rows = [
        {
            "model": m.key,
            "display_name": m.display_name,
            "votes": as_a.get(m.pk, 0) + as_b.get(m.pk, 0),
            "rating": None,
            "ci_lower": None,
            "ci_upper": None,
        }
        for m in waiting
    ]
    return sorted(rows, key=lambda r: (-r["votes"], r["display_name"].lower()))


def min_votes() -> int:
    return int(RatingConfig.current().min_model_votes)
