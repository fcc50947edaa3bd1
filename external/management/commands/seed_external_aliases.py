"""manage.py seed_external_aliases: the alias table for the demo catalogue (SOURCES.md)."""

from typing import Any

from django.core.management.base import BaseCommand

from external.services import seed_external_aliases


class Command(BaseCommand):
    help = (
        "Add the external-leaderboard aliases of the demo catalogue's models (from "
        "arena_site/data/benchmarks/SOURCES.md) that are missing. Existing aliases are never changed."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        created = seed_external_aliases()
        self.stdout.write(f"External aliases: {created} added.")
