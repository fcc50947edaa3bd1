"""manage.py import_battles FILE: the Copilot Arena sample CSV, this project's JSONL export, or a
release layout (this project's dataset releases, LMArena's preference datasets) in JSONL or Parquet.

Exit status 1 (with a one-line reason) when the file cannot be read, holds no battles, or
every row was rejected; 0 when at least one row was stored or was already present.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.cli import progress, readable_file
from ingest.transfer import import_battles


class Command(BaseCommand):
    help = (
        "Import battles from a Copilot Arena sample .csv, a .jsonl export, or a release "
        "(.parquet, .jsonl, .jsonl.gz; ours or LMArena's); bad rows are reported."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--quiet-progress", action="store_true", help="No progress bar.")
        parser.add_argument(
            "--add-unknown-models",
            action="store_true",
            help="Create catalogue models for keys the catalogue does not know (named after "
            "their key, public; audited) instead of rejecting their rows. Off by default.",
        )

    def handle(self, *args: Any, file: Path, quiet_progress: bool, add_unknown_models: bool,
               **options: Any) -> None:  # fmt: skip
        readable_file(file)

        def bar(rows: Iterable[Any]) -> Iterable[Any]:
            return rows if quiet_progress else progress(rows, desc=f"Importing {file.name}")

        try:
            report = import_battles(file, progress=bar, add_unknown_models=add_unknown_models)
        except (ValueError, UnicodeDecodeError, EOFError, zlib.error) as exc:
            raise CommandError(f"{file}: {exc}") from exc
        except OSError as exc:
            raise CommandError(f"{file}: {exc.strerror or exc}") from exc
        for line, reason in report.rejected:
            self.stderr.write(f"{file.name}:{line}: rejected: {reason}")
        if report.added_models:
            self.stdout.write(
                f"Added {len(report.added_models)} model(s) to the catalogue: "
                f"{', '.join(report.added_models)} (set their names and visibility in /admin/)."
            )
        if report.unknown_models:
            self.stderr.write(
                f"{len(report.unknown_models)} model key(s) are not in the catalogue: "
                f"{', '.join(sorted(report.unknown_models))}. Add them in /admin/ (or with "
                "seed_catalogue), or rerun with --add-unknown-models to create them."
            )
        summary = (
            f"{report.rows} row(s) read: {report.created} imported, "
            f"{report.duplicates} already present, {len(report.rejected)} rejected."
        )
        if report.rows == 0:
            raise CommandError(f"{file}: no battles in this file; nothing imported.")
        if len(report.rejected) == report.rows:
            raise CommandError(f"{summary} Every row was rejected (reasons above).")
        self.stdout.write(summary)
