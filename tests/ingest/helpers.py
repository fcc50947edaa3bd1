"""Helpers for ingest tests: table counts and a check that a rejection stored nothing."""

from __future__ import annotations

from core.models import ApiClient
from ingest.models import Battle, CodeContext, CompletionCode, CompletionLog, SingleOutcome

TABLES = (Battle, CodeContext, CompletionLog, CompletionCode, SingleOutcome)


def row_counts() -> dict[str, int]:
    return {t.__name__: t.objects.count() for t in TABLES}


def assert_rejected(response, status: int, field: str | None, fragment: str, before: dict) -> None:
    assert response.status_code == status, response.content
    body = response.json()
    assert fragment.lower() in body["message"].lower(), body
    if field is not None:
        assert field in body["fields"], body
        assert field in body["message"], body
    assert row_counts() == before


def all_text_in_database() -> str:
    """Every text column of every ingest table, concatenated (to search for leaked code)."""
    parts = []
    for table in (*TABLES, ApiClient):
        for row in table.objects.values():
            parts.extend(str(v) for v in row.values())
    return "\n".join(parts)
