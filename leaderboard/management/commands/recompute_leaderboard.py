"""manage.py recompute_leaderboard: recompute and publish now, in this process."""

from django.core.management.base import BaseCommand

from core.cli import progress
from leaderboard.recompute import recompute


class Command(BaseCommand):
    help = "Recompute every slice and publish a new snapshot (no worker needed)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--full",
            action="store_true",
            help="Recount every battle (rebuild the maintained per-day counts) instead of "
            "only the days that changed since the last recompute.",
        )

    def handle(self, *args, **options):
        s = recompute(
            trigger="command",
            full=options["full"],
            progress=lambda jobs: progress(jobs, total=len(jobs), desc="Fitting", unit=" slices"),
        )
        self.stdout.write(
            f"Published snapshot {s.pk}: {s.battles:,} battles, {s.users:,} users, "
            f"{s.duration_seconds:.2f} s (SQL {s.aggregate_seconds:.2f} s, fit {s.fit_seconds:.2f} s)."
        )
