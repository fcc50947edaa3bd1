"""manage.py relabel_battles: recompute stale slice labels (labeler_version != current)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from analysis.labels import LABELER_VERSION
from ingest.relabel import RelabelReport, relabel_stale_battles, stale_battles


class Command(BaseCommand):
    help = (
        "Relabel battles whose labels come from an older labeller. Battles with stored code "
        "(Research privacy) get every label recomputed; the others only their programming "
        "language, from the stored file type (their code was never stored, so the content-based "
        "labels keep their ingest-time values)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--chunk-size", type=int, default=500, help="Battles per transaction.")
        parser.add_argument("--limit", type=int, default=None, help="Stop after this many.")
        parser.add_argument(
            "--async",
            dest="run_async",
            action="store_true",
            help="Queue the Celery task instead of running here (it also queues a recompute).",
        )
        parser.add_argument("--dry-run", action="store_true", help="Only count the stale battles.")

    def handle(self, *args: Any, chunk_size: int, limit: int | None, run_async: bool,
               dry_run: bool, **options: Any) -> None:  # fmt: skip
        if chunk_size < 1:
            raise CommandError("--chunk-size must be at least 1")
        stale = stale_battles().count()
        self.stdout.write(f"Labeller {LABELER_VERSION}: {stale:,} battle(s) to relabel.")
        if dry_run or not stale:
            return
        if run_async:
            from ingest.tasks import relabel_battles

            relabel_battles.delay(chunk_size=chunk_size)
            self.stdout.write("Queued the relabel task.")
            return

        def progress(report: RelabelReport) -> None:
            if report.chunks % 20 == 0:
                self.stdout.write(f"  {report.examined:,} relabelled…")

        report = relabel_stale_battles(chunk_size=chunk_size, limit=limit, on_chunk=progress)
        self.stdout.write(
            f"Relabelled {report.examined:,} battle(s) in {report.seconds:.1f} s: "
            f"{report.from_code:,} from their stored code, {report.from_file_type:,} from the "
            f"file type only; {report.changed:,} changed. Run recompute_leaderboard (or wait "
            "for the scheduled one) to see the new labels on the boards."
        )
