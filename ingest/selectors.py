"""Reads of the ingest data."""

from __future__ import annotations

from .models import Battle


def user_vote_count(*, user_hash: str) -> int:
    return Battle.objects.filter(user_hash=user_hash).count()
