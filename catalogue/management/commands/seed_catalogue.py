"""Add the demo catalogue (the published Copilot Arena models) where missing."""

from typing import Any

from django.core.management.base import BaseCommand

from catalogue.services import seed_demo_catalogue


class Command(BaseCommand):
    help = (
        "Create the published Copilot Arena models in the catalogue (existing ones are left alone)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        created = seed_demo_catalogue()
        self.stdout.write(f"Catalogue: {created} model(s) added.")
