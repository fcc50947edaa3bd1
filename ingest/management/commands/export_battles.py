"""manage.py export_battles: every battle as JSONL (users pseudonymised; code only on request)."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.cli import progress
from ingest.models import Battle, BattleSource
from ingest.transfer import export_rows


class Command(BaseCommand):
    help = "Write battles as JSON lines, re-importable with import_battles."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", "-o", help="File to write (default: standard output).")
        parser.add_argument(
            "--include-code", action="store_true", help="Include code of Research battles."
        )
        parser.add_argument("--source", action="append", choices=BattleSource.values)

    def handle(
        self,
        *args: Any,
        output: str | None = None,
        include_code: bool = False,
        source: list[str] | None = None,
        **options: Any,
    ) -> None:
        qs = Battle.objects.all()
        if source:
            qs = qs.filter(source__in=source)
        with contextlib.ExitStack() as stack:
            try:
                stream = (
                    stack.enter_context(open(output, "w", encoding="utf-8"))
                    if output
                    else sys.stdout
                )
            except OSError as exc:
                raise CommandError(f"{output}: cannot write ({exc.strerror or exc})") from exc
            n = 0
            rows = export_rows(include_code=include_code, sources=source)
            for row in progress(rows, total=qs.count(), desc="Exporting", unit=" battles"):
                stream.write(json.dumps(row, ensure_ascii=False) + "\n")
                n += 1
        summary = f"Exported {n:,} battle(s)" + (f" to {output}." if output else ".")
        if output:
            self.stdout.write(summary)
        else:
            # stdout carries the export itself: the summary goes beside it, in plain style
            # (stderr's default style is the error style).
            self.stderr.write(summary, style_func=lambda text: text)
