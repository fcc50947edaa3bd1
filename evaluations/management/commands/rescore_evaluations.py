"""Score finished CodeArena judge runs again from their stored verdicts (no model is called)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from evaluations.services import rescore_runs


class Command(BaseCommand):
    help = (
        "Recompute the CodeArena win rate of finished judge runs from the verdicts they "
        "stored, with the current rule, and publish their boards again (docs/evaluations.md)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run_ids", nargs="*", type=int, help="only these runs (default: all)")

    def handle(self, *args: Any, **options: Any) -> None:
        runs = rescore_runs(run_ids=options["run_ids"] or None)
        for run in runs:
            score = "-" if run.score is None else f"{run.score:.1f}%"
            self.stdout.write(f"#{run.pk} {run.model.key} on {run.dataset}: {score}")
        self.stdout.write(f"Re-scored {len(runs)} run(s).")
