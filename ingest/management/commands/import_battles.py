"""manage.py import_battles FILE: the Copilot Arena sample CSV or this project's JSONL export."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from ingest.transfer import import_battles


class Command(BaseCommand):
    help = (
        "Import battles from a Copilot Arena sample .csv or a .jsonl export; bad rows are reported."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--quiet-progress", action="store_true", help="No progress bar.")

    def handle(self, *args, file: Path, quiet_progress: bool, **options):
        if not file.exists():
            raise CommandError(f"No such file: {file}")

        def progress(rows):
            return (
                rows if quiet_progress else tqdm(rows, desc=f"Importing {file.name}", unit=" rows")
            )

        try:
            report = import_battles(file, progress=progress)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        for line, reason in report.rejected:
            self.stderr.write(f"{file.name}:{line}: rejected: {reason}")
        self.stdout.write(
            f"{report.rows} row(s) read: {report.created} imported, "
            f"{report.duplicates} already present, {len(report.rejected)} rejected."
        )
