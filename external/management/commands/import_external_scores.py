"""manage.py import_external_scores FORMAT FILE...: import an external leaderboard's scores."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser, OutputWrapper

from core.cli import readable_file
from external.benchmark_formats import BenchmarkFormatError
from external.importers import FORMATS
from external.services import ImportReport, import_demo_scores, import_scores


def write_report(stdout: OutputWrapper, report: ImportReport, *, wrap: int = 100) -> None:
    for b in report.boards:
        stdout.write(
            f"{b.label}: {b.scores} score(s){' (replacing the earlier import)' if b.replaced else ''}"
            f" — {len(b.matched)} matched, {len(b.ignored)} deliberately unmatched, "
            f"{len(b.unmatched)} unmatched."
        )
        if b.matched:
            pairs = ", ".join(f"{n} → {k}" for n, k in sorted(b.matched.items()))
            stdout.write(textwrap.indent(textwrap.fill("matched: " + pairs, wrap), "  "))
        if b.unmatched:
            stdout.write(
                textwrap.indent(textwrap.fill("unmatched: " + ", ".join(b.unmatched), wrap), "  ")
            )
        for key, names in b.ambiguous.items():
            stdout.write(
                f"  warning: {key} matches several names ({', '.join(names)}); "
                "the alias-table one is used"
            )


class Command(BaseCommand):
    help = (
        "Import scores of an external leaderboard (all-or-nothing) and report which model "
        "names matched the catalogue. Formats: " + ", ".join(FORMATS) + ". LiveBench takes "
        "table_<date>.csv (its categories_<date>.json is found next to it, or give both). "
        "--demo imports the files load_demo uses."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("format", nargs="?", choices=FORMATS)
        parser.add_argument("files", nargs="*", type=Path)
        parser.add_argument("--release", help="Label of this release (default: from the file).")
        parser.add_argument("--start", help="LiveCodeBench: first problem date (YYYY-MM-DD).")
        parser.add_argument("--end", help="LiveCodeBench: problems before this date.")
        parser.add_argument("--demo", action="store_true", help="Import the demo files.")

    def handle(
        self,
        *args: Any,
        format: str | None,
        files: list[Path],
        release: str | None,
        start: str | None,
        end: str | None,
        demo: bool,
        **options: Any,
    ) -> None:
        try:
            if demo:
                if format or files:
                    raise CommandError("--demo takes no format or files")
                report = import_demo_scores()
            else:
                if not format or not files:
                    raise CommandError("give a format and at least one file (or --demo)")
                if (start or end) and format != "livecodebench":
                    raise CommandError("--start/--end only apply to livecodebench")
                for path in files:
                    readable_file(path)
                report = import_scores(
                    fmt=format, paths=files, release=release, start=start, end=end
                )
        except BenchmarkFormatError as exc:
            raise CommandError(f"Nothing imported. {exc}") from exc
        except ValueError as exc:
            raise CommandError(f"Nothing imported. {exc}") from exc
        write_report(self.stdout, report)
