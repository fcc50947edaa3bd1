"""Import a CodeArena-layout question set (JSON lines) for the judge suite."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluations.services import import_question_set


class Command(BaseCommand):
    help = "Import a question set (CodeArena's JSON-lines layout; see docs/evaluations.md)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path")
        parser.add_argument("--name", required=True, help="the set's name (a slug)")
        parser.add_argument("--taxonomy", help="CodeArena's tasktype_to_levels.json")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            qset = import_question_set(
                name=options["name"], path=options["path"], taxonomy=options["taxonomy"]
            )
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        n = qset.questions.count()
        categories = qset.questions.exclude(category="").values("category").distinct().count()
        self.stdout.write(f"Imported {n} questions in {categories} categories as {qset.name}.")
