"""The served pairs' completion logs, written with one hand-written upsert, store exactly
what the ORM's ``bulk_create(update_conflicts=...)`` stored (new rows and merges into rows the
extension wrote first)."""

from __future__ import annotations

import pytest

from ingest.completions import SERVER_COLUMNS, _log_fields, _upsert, record_completions
from ingest.models import CompletionLog, Privacy
from ingest.votes import CompletionIn

pytestmark = pytest.mark.django_db


def variants(model_ids: list[int]) -> list[list[CompletionIn]]:
    a, b = model_ids[:2]
    return [
        [
            CompletionIn(
                completion_id="v-1",
                model_id=a,
                user_id="machine-1",
                privacy=Privacy.PRIVATE,  # a Choices member, as serializers hand it over
                pair_completion_id="v-2",
                pair_id="pair-1",
                pair_index=0,
                latency_ms=812,  # an int where the column is a float
                served_by_us=True,
                pair_probability=0.125,
            ),
            CompletionIn(
                completion_id="v-2",
                model_id=b,
                user_id="machine-1",
                privacy="Research",
                pair_completion_id="v-1",
                pair_id="pair-1",
                pair_index=1,
                latency_ms=1301.5,
                served_by_us=True,
                pair_probability=0.125,
                prompt="def f(",
                completion="x):",
            ),
        ],
        [
            CompletionIn(
                completion_id="v-3",
                model_id=b,
                user_id="",
                privacy=Privacy.DEBUG,
                pair_id="pair-2",
                served_by_us=True,
                succeeded=False,
                latency_ms=None,
                file_type="python",
                client_version="0.2.2",
            )
        ],
        # The extension logged v-1 first (client columns); the server's columns merge in.
        [
            CompletionIn(
                completion_id="v-1",
                model_id=b,
                user_id="machine-2",
                privacy="Private",
                pair_id="pair-9",
                pair_index=1,
                latency_ms=2.5,
                served_by_us=True,
                file_type="rust",
                client_version="9.9",
            )
        ],
    ]


def stored() -> list[dict]:
    return list(
        CompletionLog.objects.order_by("completion_id").values(
            *[f.attname for f in CompletionLog._meta.concrete_fields if f.attname != "id"]
        )
    )


def without_times(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if k != "received_at"} for row in rows]


def test_raw_upsert_stores_what_the_orm_stored(models):
    ids = [m.pk for m in models.values()]
    client_first = CompletionLog(
        completion_id="v-1",
        model_id=ids[0],
        privacy="Private",
        file_type="typescript",
        client_version="1.2.7",
        latency_ms=9.99,
    )
    by_orm = []
    client_first.save()
    for batch in variants(ids):
        _upsert(
            [CompletionLog(completion_id=c.completion_id, **_log_fields(c)) for c in batch],
            columns=SERVER_COLUMNS,
        )
        by_orm.append(stored())
    CompletionLog.objects.all().delete()
    client_first.pk = None
    client_first.save()
    by_raw = []
    for batch in variants(ids):
        record_completions(completions=batch)
        by_raw.append(stored())
    assert [without_times(rows) for rows in by_raw] == [without_times(rows) for rows in by_orm]
    assert all(row["received_at"] is not None for rows in by_raw for row in rows)
    merged = CompletionLog.objects.get(completion_id="v-1")
    assert (merged.latency_ms, merged.client_version, merged.pair_id) == (2.5, "1.2.7", "pair-9")
    assert type(merged.privacy) is str and merged.privacy == "Private"
