"""manage.py simulate_battles --battles N --seed S (or --delete)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.cli import progress
from ingest.simulation import delete_simulated, simulate


class Command(BaseCommand):
    help = "Add realistic simulated battles (marked source=simulated), or delete them all."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--battles", type=int, default=10_000)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--delete", action="store_true", help="Delete every simulated battle.")

    def handle(self, *args: Any, battles: int, seed: int, delete: bool, **options: Any) -> None:
        if delete:
            self.stdout.write(f"Deleted {delete_simulated()} simulated battle(s).")
            return
        if battles < 1:
            raise CommandError("--battles must be at least 1")
        result = simulate(
            battles=battles,
            seed=seed,
            progress=lambda rows, total: progress(
                rows, total=total, desc="Writing", unit=" battles"
            ),
        )
        self.stdout.write(
            f"Simulated {result.battles:,} battles from {result.users:,} users "
            f"in {result.seconds:.1f} s (seed {seed})."
        )
