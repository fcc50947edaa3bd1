"""manage.py recompute_leaderboard: recompute and publish now, in this process.

Prints one summary on stdout: the snapshot, and how many public models with votes are
below the board's vote minimum (so not rated yet). The recompute's own "Published
snapshot" log line is held back while the command runs: the summary says it.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from catalogue.models import ArenaModel, Visibility
from core.cli import progress
from ingest.models import Battle
from leaderboard.models import RatingConfig, Snapshot, SnapshotSlice
from leaderboard.recompute import recompute


class _NotThePublishedLine(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Published snapshot")


def below_minimum(snapshot: Snapshot) -> int:
    """Public models with counted votes that the snapshot's overall board leaves out."""
    rated = set(
        SnapshotSlice.objects.filter(snapshot=snapshot, key="overall")
        .values_list("models_order", flat=True)
        .first()
        or []
    )
    missing = list(
        ArenaModel.objects.filter(visibility=Visibility.PUBLIC)
        .exclude(key__in=rated)
        .values_list("id", flat=True)
    )
    if not missing:
        return 0
    counted = Battle.objects.filter(excluded=False)
    voted = set(
        counted.filter(model_a_id__in=missing).values_list("model_a_id", flat=True).distinct()
    ) | set(counted.filter(model_b_id__in=missing).values_list("model_b_id", flat=True).distinct())
    return len(voted)


class Command(BaseCommand):
    help = "Recompute every slice and publish a new snapshot (no worker needed)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--full",
            action="store_true",
            help="Recount every battle (rebuild the maintained per-day counts) instead of "
            "only the days that changed since the last recompute.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        quiet = _NotThePublishedLine()
        logger = logging.getLogger("leaderboard.recompute")
        logger.addFilter(quiet)
        try:
            s = recompute(
                trigger="command",
                full=options["full"],
                progress=lambda jobs: progress(
                    jobs, total=len(jobs), desc="Fitting", unit=" slices"
                ),
            )
        finally:
            logger.removeFilter(quiet)
        rated = len(
            SnapshotSlice.objects.filter(snapshot=s, key="overall")
            .values_list("models_order", flat=True)
            .first()
            or []
        )
        minimum = RatingConfig.current().min_model_votes
        below = below_minimum(s)
        line = (
            f"Published snapshot {s.pk}: {s.battles:,} battles, {s.users:,} users, "
            f"{rated} model(s) rated, {s.duration_seconds:.2f} s "
            f"(SQL {s.aggregate_seconds:.2f} s, fit {s.fit_seconds:.2f} s)."
        )
        if below:
            line += (
                f" {below} public model(s) with votes are below the {minimum}-vote minimum "
                "and not on the board yet."
            )
        self.stdout.write(line)
