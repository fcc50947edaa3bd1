"""manage.py load_demo: what `make run` shows on a fresh machine.

Adds the demo catalogue, imports the real Copilot Arena sample (112 battles), adds
simulated battles (clearly marked on the pages), computes the leaderboard, and — only in
the embedded DEBUG setup — creates a local `admin` / `admin` superuser. Running it again
adds nothing that is already there.
"""

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from catalogue.services import seed_demo_catalogue
from external.services import import_demo_scores, seed_external_aliases
from ingest.models import Battle, BattleSource
from ingest.simulation import simulate
from ingest.transfer import import_battles
from moderation.roles import ensure_groups

SAMPLE = Path(settings.BASE_DIR) / "data" / "copilot-arena-sample" / "copilot_arena_examples_v1.csv"


class Command(BaseCommand):
    help = (
        "Load demo data: catalogue, the real sample battles, simulated battles, a computed board."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--simulated", type=int, default=20_000, help="Simulated battles to add."
        )

    def handle(self, *args: Any, simulated: int, **options: Any) -> None:
        created = seed_demo_catalogue()
        self.stdout.write(f"Catalogue: {created} model(s) added.")
        seed_external_aliases()  # external scores and their aliases, for the correlations
        boards = import_demo_scores().boards
        self.stdout.write(
            f"External scores: {len(boards)} board(s) from arena_site/data/benchmarks/."
        )
        report = import_battles(SAMPLE)
        self.stdout.write(
            f"Copilot Arena sample: {report.created} imported, {report.duplicates} already present, "
            f"{len(report.rejected)} malformed row(s) skipped."
        )
        if simulated and not Battle.objects.filter(source=BattleSource.SIMULATED).exists():
            result = simulate(battles=simulated, seed=7)
            self.stdout.write(
                f"Simulated battles: {result.battles:,} added ({result.seconds:.1f} s)."
            )
        ensure_groups()
        if settings.EMBEDDED and settings.DEBUG:
            User = get_user_model()
            if not User.objects.filter(username="admin").exists():
                User.objects.create_superuser("admin", "admin@localhost", "admin")
                self.stdout.write("Local admin: /admin/ as admin / admin (embedded demo only).")
        call_command("recompute_leaderboard", stdout=self.stdout)
