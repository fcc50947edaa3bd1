"""Writes of the leaderboard app: the catalogue."""

from __future__ import annotations

from .demo_catalogue import DEMO_MODELS
from .models import ArenaModel


def seed_demo_catalogue() -> int:
    """Create the demo models that are missing; never changes existing ones. Returns how many."""
    created = 0
    for m in DEMO_MODELS:
        _, was_created = ArenaModel.objects.get_or_create(
            key=m.key,
            defaults={
                "display_name": m.display_name,
                "organization": m.organization,
                "license": m.license,
                "style": m.style,
            },
        )
        created += was_created
    return created
