"""Writes of shown completions: the latency log, single accepted completions, code under Research.

A completion this server served is logged twice: by the pair server itself (with the latency
it measured) and by the extension's `/add_completion` when it shows it (with its version and
file type). Both land in one `CompletionLog` row keyed by the completion id, whichever comes
first: each side's upsert sets only the columns it knows best, so the served latency is never
replaced by the client's and the client's fields are never lost.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.db import connection, models, transaction
from django.utils import timezone

from .models import CompletionCode, CompletionLog, SingleOutcome
from .pseudonyms import pseudonymise_user
from .votes import CompletionIn


def _log_fields(completion: CompletionIn) -> dict[str, Any]:
    return {
        "pair_completion_id": completion.pair_completion_id,
        "pair_id": completion.pair_id,
        "pair_index": completion.pair_index,
        "model_id": completion.model_id,
        "latency_ms": completion.latency_ms,
        "user_hash": pseudonymise_user(completion.user_id),
        "privacy": completion.privacy,
        "file_type": completion.file_type,
        "client_version": completion.client_version,
        "served_by_us": completion.served_by_us,
        "succeeded": completion.succeeded,
        "pair_probability": completion.pair_probability,
    }


# Columns each writer owns when the row already exists (see the module docstring).
CLIENT_COLUMNS = ["client_version", "file_type"]
SERVER_COLUMNS = [
    "latency_ms",
    "served_by_us",
    "succeeded",
    "pair_id",
    "pair_index",
    "pair_probability",
]


def _upsert(logs: list[CompletionLog], *, columns: list[str]) -> None:
    CompletionLog.objects.bulk_create(
        logs, update_conflicts=True, unique_fields=["completion_id"], update_fields=columns
    )


# The same upsert as one hand-written statement (PostgreSQL): the ORM's bulk_create (model
# instances, SQL compilation, per-field value preparation) was ~a fifth of a served pair's
# CPU. Values are prepared as the fields would (plain str/int/float/bool, not Choices
# members), columns a writer does not set take the model's defaults.
_LOG_FIELDS = [f for f in CompletionLog._meta.concrete_fields if not f.primary_key]
_LOG_TABLE = CompletionLog._meta.db_table
_LOG_COLUMN_LIST = ", ".join(f'"{f.column}"' for f in _LOG_FIELDS)
_LOG_ROW = "(" + ", ".join(["%s"] * len(_LOG_FIELDS)) + ")"


def _preparer(field: models.Field[Any, Any]) -> Callable[[Any], Any]:
    kind = field.get_internal_type()
    if kind in ("CharField", "TextField"):
        return str
    if kind == "FloatField":
        return float
    if kind == "BooleanField":
        return bool
    if kind in ("ForeignKey", "PositiveSmallIntegerField", "IntegerField", "BigIntegerField"):
        return int
    return lambda value: value  # received_at: an aware datetime from timezone.now


_LOG_PREPARE = [(f.attname, _preparer(f)) for f in _LOG_FIELDS]


@functools.cache
def _upsert_sql(rows: int, columns: tuple[str, ...]) -> str:
    column_of = {f.name: f.column for f in _LOG_FIELDS}
    names = [column_of[c] for c in columns]
    updates = ", ".join(f'"{name}" = EXCLUDED."{name}"' for name in names)
    # Names from the model's _meta, values as parameters (ruff S608 answered).
    return (
        f'INSERT INTO "{_LOG_TABLE}" ({_LOG_COLUMN_LIST}) VALUES '  # noqa: S608
        + ", ".join([_LOG_ROW] * rows)
        + f' ON CONFLICT ("completion_id") DO UPDATE SET {updates}'
    )


def _log_values(completion: CompletionIn) -> list[Any]:
    values = {
        "completion_id": completion.completion_id,
        **_log_fields(completion),
        "received_at": timezone.now(),  # the field's default, per row as the ORM has it
    }
    out = []
    for name, prepare in _LOG_PREPARE:
        value = values[name]
        out.append(None if value is None else prepare(value))
    return out


def _upsert_completions(completions: list[CompletionIn], *, columns: list[str]) -> None:
    if not completions:
        return
    if connection.vendor != "postgresql":
        _upsert(
            [CompletionLog(completion_id=c.completion_id, **_log_fields(c)) for c in completions],
            columns=columns,
        )
        return
    params = [value for c in completions for value in _log_values(c)]
    with connection.cursor() as cursor:
        cursor.execute(_upsert_sql(len(completions), tuple(columns)), params)


def record_completion(*, completion: CompletionIn) -> bool:
    """Log a completion the extension showed. False when its id was already logged."""
    with transaction.atomic():
        created = not CompletionLog.objects.filter(completion_id=completion.completion_id).exists()
        log = CompletionLog(completion_id=completion.completion_id, **_log_fields(completion))
        _upsert([log], columns=CLIENT_COLUMNS)
        if completion.keep_code:
            _keep_completion_code(completion)
    return created


def record_completions(*, completions: list[CompletionIn]) -> None:
    """Log the calls the pair server made (all of a pair at once): one upsert for the logs
    and one INSERT for the code, instead of a lookup and a savepoint per row. A row the
    extension already wrote keeps its client columns and takes the served ones; code is kept
    only under Research, as in `record_completion`."""
    with transaction.atomic():
        _upsert_completions(completions, columns=SERVER_COLUMNS)
        codes = [
            CompletionCode(completion_id=c.completion_id, prompt=c.prompt, completion=c.completion)
            for c in completions
            if c.keep_code
        ]
        if codes:
            CompletionCode.objects.bulk_create(codes, ignore_conflicts=True)


def record_single_outcome(*, completion: CompletionIn) -> bool:
    """Record that the only completion shown was accepted. False for a replayed id."""
    with transaction.atomic():
        _, created = SingleOutcome.objects.get_or_create(
            completion_id=completion.completion_id,
            defaults={
                "model_id": completion.model_id,
                "user_hash": pseudonymise_user(completion.user_id),
                "privacy": completion.privacy,
                "client_version": completion.client_version,
            },
        )
        if created and completion.keep_code:
            _keep_completion_code(completion)
    return created


def _keep_completion_code(completion: CompletionIn) -> None:
    CompletionCode.objects.get_or_create(
        completion_id=completion.completion_id,
        defaults={"prompt": completion.prompt, "completion": completion.completion},
    )
