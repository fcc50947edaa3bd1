"""Reads of the ingest data."""

from __future__ import annotations

from django.db.models import QuerySet

from .models import Battle, BattleKind


def counted_votes(*, user_hash: str) -> QuerySet[Battle]:
    """The user's votes that count on the board: completion battles, not excluded.

    Edit battles have a board of their own slice, and excluded votes count nowhere; this is
    what the extension's "votes" counter means (the original server counted completion
    outcomes).
    """
    return Battle.objects.filter(user_hash=user_hash, kind=BattleKind.COMPLETION, excluded=False)


def user_vote_count(*, user_hash: str) -> int:
    return counted_votes(user_hash=user_hash).count()


def held_battles() -> int:
    """Battles held out of the board pending a decision (ingest.models.Hold); every held
    battle is also excluded, so the board's own counts already leave them out."""
    return Battle.objects.exclude(hold="").count()
