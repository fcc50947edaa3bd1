"""Battle rows as plain column -> value dicts, and the raw SQL that writes them.

Votes are written as plain rows rather than through Model.save(): the ORM's per-row work
(instance set-up, SQL compilation, value preparation) was a fifth of a single vote's CPU and
most of a batch's. Columns a vote does not set take the model's defaults, computed once.
The same writer serves single votes (one INSERT), code-less batches and the simulator
(COPY); other databases than PostgreSQL (the embedded SQLite) take the ORM path.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable
from contextlib import nullcontext
from datetime import datetime
from typing import Any

import psycopg
from django.db import IntegrityError, InterfaceError, OperationalError, connection, transaction
from django.db.models import OuterRef, Subquery

from .binding import BOUND_SQL, is_bound
from .labelling import label_fields
from .models import Battle, CodeContext, CompletionLog, Hold
from .pseudonyms import context_fingerprint, pseudonymise_user
from .votes import VoteIn

# A battle row: column name to value, as written by every writer of battles.
Row = dict[str, Any]

_FIELDS = [f for f in Battle._meta.concrete_fields if not f.primary_key]
COLUMNS = tuple(f.attname for f in _FIELDS)
ROW_DEFAULTS = {f.attname: f.get_default() for f in _FIELDS if f.attname not in ("received_at",)}
_TABLE = Battle._meta.db_table
_COLUMN_LIST = ", ".join(f'"{f.column}"' for f in _FIELDS)
# One statement, atomic on its own: a replayed pair id inserts nothing and returns no row,
# so no savepoint is needed to survive the duplicate, even inside a caller's transaction.
_LOG_TABLE = CompletionLog._meta.db_table
# A vote of a pair our server drew takes the pair's sampler probability from its completion
# log inside the INSERT itself (a scalar subquery on the indexed pair_id), so the vote stays
# one statement. The log is written while the user looks at the pair, long before the vote.
# The statements below are assembled from the models' table and column names (_meta); every
# value goes as a parameter, so ruff's S608 (SQL built from strings) is answered here.
_PROBABILITY_SQL = (
    f'(SELECT "pair_probability" FROM "{_LOG_TABLE}" WHERE "pair_id" = %s '  # noqa: S608
    'AND "pair_probability" IS NOT NULL LIMIT 1)'
)
# A vote bound to a served pair (ingest/binding.py) arrives held as unverified and is
# released in the same statement when the pair's logs match: the hold and excluded columns
# keep the row's value unless it is an unverified hold and BOUND_SQL holds.
_RELEASED = f"%s = '{Hold.UNVERIFIED.value}' AND {BOUND_SQL}"
_COLUMN_SQL = {
    "pair_probability": _PROBABILITY_SQL,
    "hold": f"CASE WHEN {_RELEASED} THEN '' ELSE %s END",
    "excluded": f"CASE WHEN {_RELEASED} THEN FALSE ELSE %s END",
}
_VALUES = ", ".join(_COLUMN_SQL.get(f.attname, "%s") for f in _FIELDS)
_INSERT_SQL = (
    f'INSERT INTO "{_TABLE}" ({_COLUMN_LIST}) VALUES ({_VALUES}) '  # noqa: S608
    'ON CONFLICT ("pair_id") DO NOTHING RETURNING "id", "hold"'
)
_COPY_SQL = f'COPY "{_TABLE}" ({_COLUMN_LIST}) FROM STDIN'
_STORED_SQL = f'SELECT "pair_id", "content_hash" FROM "{_TABLE}" WHERE "pair_id" = ANY(%s)'  # noqa: S608


def content_hash(
    *, kind: str, user_hash: str, model_a_id: int, model_b_id: int, outcome: int
) -> str:
    """What makes two posts of one pair id "the same vote": who, which models where, result."""
    text = f"{kind}|{user_hash}|{model_a_id}|{model_b_id}|{outcome}"
    return hashlib.sha256(text.encode()).hexdigest()


def text_lines(text: str) -> int:
    """Lines of a completion as stored: its line breaks + 1 (the back-fill counts the same)."""
    return text.count("\n") + 1


def completion_lengths(vote: VoteIn) -> dict[str, int | None]:
    """The completions' lengths in characters and lines, for every privacy level.

    Read from the texts while they are in memory (before `services._code` drops them for
    Private and Debug votes); only the integers reach the battle row. Without a text the
    count the client sent (if any) is kept, and the lines are unknown.
    """
    out = {}
    for side in ("a", "b"):
        text = getattr(vote.code, f"completion_{side}")
        sent = getattr(vote, f"completion_{side}_chars")
        out[f"completion_{side}_chars"] = len(text) if text else sent
        out[f"completion_{side}_lines"] = text_lines(text) if text else None
    return out


def battle_row(
    vote: VoteIn, *, client_id: int | None, ip_hash: str, now: datetime, bind: bool = False
) -> Row:
    """The battle row of a vote, every column set (model defaults for the rest). ``bind``:
    held as unverified unless its pair is a served one (checked by `insert_one`)."""
    user_hash = vote.user_hash or (pseudonymise_user(vote.user_id) if vote.user_id else "")
    # Plain values (not the Choices members the serializers hand over) for the driver.
    outcome, kind = int(vote.outcome), str(vote.kind)
    return {
        **ROW_DEFAULTS,
        "pair_id": vote.pair_id,
        "user_hash": user_hash,
        "model_a_id": vote.model_a_id,
        "model_b_id": vote.model_b_id,
        "outcome": outcome,
        "kind": kind,
        "file_type": vote.file_type,
        "privacy": str(vote.privacy),
        "latency_a_ms": vote.latency_a_ms,
        "latency_b_ms": vote.latency_b_ms,
        "prefix_chars": vote.prefix_chars,
        "suffix_chars": vote.suffix_chars,
        **completion_lengths(vote),
        "client_version": vote.client_version,
        "received_at": vote.received_at or now,
        "source": str(vote.source),
        "client_id": client_id,
        "ip_hash": ip_hash,
        "content_hash": content_hash(
            kind=kind,
            user_hash=user_hash,
            model_a_id=vote.model_a_id,
            model_b_id=vote.model_b_id,
            outcome=outcome,
        ),
        "context_hash": context_fingerprint(vote.code.prefix, vote.code.suffix),
        **label_fields(vote),
        "hold": Hold.UNVERIFIED.value if bind else "",
        "excluded": bind,
    }


def raw_sql() -> bool:
    # The hand-written SQL (ON CONFLICT, = ANY, COPY, prepared statements) is PostgreSQL's.
    return connection.vendor == "postgresql"


def _insert_raw(params: list[Any]) -> tuple[int, str] | None:
    """Run `_INSERT_SQL`; the new id and hold, or None when the pair id is already stored.

    Each round trip costs this process about as much CPU as the INSERT's own (waiting on
    a socket is not free), so the INSERT is the request's only statement: it runs on a
    psycopg cursor of Django's connection (server-side binding; prepared once the driver's
    `prepare_threshold` says so, which Django leaves off by default for connection
    poolers), with Django's exception types, but without Django's per-request health
    check (`SELECT 1` before the first query, CONN_HEALTH_CHECKS). It checks for itself
    instead: outside a transaction, if a reused connection turns out dead, it reconnects
    and runs again, which is what the health check would have done. Running twice is
    safe: with ON CONFLICT DO NOTHING, a first run that did commit makes the second a
    replay.

    When queries are being recorded (DEBUG, tests capturing queries) it goes through
    Django's cursor instead, so the statement is logged like any other.
    """
    may_retry = connection.connection is not None and not connection.in_atomic_block
    connection.ensure_connection()
    if connection.queries_logged:
        with connection.cursor() as cursor:
            cursor.execute(_INSERT_SQL, params)
            row = cursor.fetchone()
        return None if row is None else (row[0], row[1])
    try:
        return _execute_raw(params)
    except (OperationalError, InterfaceError):
        if not may_retry or connection.is_usable():
            raise  # not a dead connection
        connection.close()
        connection.ensure_connection()
        return _execute_raw(params)


# The INSERT's cursor, kept per thread with the psycopg connection it was opened on: a
# cursor's adapters learn each column's Python type once, and a new cursor per vote paid
# for that and its own set-up again (docs/performance.md, "Measured by hand"). Django's
# connection is per thread, so is this.
_insert_cursors = threading.local()


def _insert_cursor() -> psycopg.Cursor:
    raw = connection.connection
    cursor = getattr(_insert_cursors, "cursor", None)
    if cursor is None or cursor.closed or cursor.connection is not raw:
        cursor = _insert_cursors.cursor = psycopg.Cursor(raw)
    return cursor


def _execute_raw(params: list[Any]) -> tuple[int, str] | None:
    connection.validate_no_broken_transaction()
    with connection.wrap_database_errors:
        cursor = _insert_cursor()
        cursor.execute(_INSERT_SQL, params)
        row = cursor.fetchone()
    return None if row is None else (row[0], row[1])


def _params(row: Row) -> list[Any]:
    """`_INSERT_SQL`'s parameters: a value per column, the bound check's where it has one."""
    bound = [row["hold"], row["pair_id"], row["model_a_id"], row["model_b_id"]]
    out: list[Any] = []
    for c in COLUMNS:
        if c == "pair_probability":
            out.append(row["pair_id"])
        elif c in ("hold", "excluded"):
            out += [*bound, row[c]]
        else:
            out.append(row[c])
    return out


def insert_one(row: Row, code: CodeContext | None) -> tuple[int, str] | None:
    """Store one battle (and its code); its id and hold, or None when its pair id is
    already stored."""
    if not raw_sql():
        return _insert_one_orm(row, code)
    params = _params(row)
    if code is None:
        return _insert_raw(params)
    with transaction.atomic():
        stored = _insert_raw(params)
        if stored is not None:
            code.battle_id = stored[0]
            code.save(force_insert=True)
    return stored


def served_probability(pair_id: Any) -> Subquery:
    """The sampler probability stored on the completion logs of `pair_id` (a value or an
    OuterRef), as a subquery: NULL when we did not serve that pair."""
    logs = CompletionLog.objects.filter(pair_id=pair_id, pair_probability__isnull=False)
    return Subquery(logs.values("pair_probability")[:1])


def fill_pair_probabilities(pair_ids: list[str]) -> None:
    """Copy the served pairs' probabilities onto the battles just stored under `pair_ids`
    (batches: one UPDATE for the batch rather than a lookup per vote)."""
    if pair_ids:
        Battle.objects.filter(pair_id__in=pair_ids, pair_probability__isnull=True).update(
            pair_probability=served_probability(OuterRef("pair_id"))
        )


def _insert_one_orm(row: Row, code: CodeContext | None) -> tuple[int, str] | None:
    if row["hold"] == Hold.UNVERIFIED and is_bound(
        pair_id=row["pair_id"], model_a_id=row["model_a_id"], model_b_id=row["model_b_id"]
    ):
        row = {**row, "hold": "", "excluded": False}
    battle = Battle(**{**row, "pair_probability": served_probability(row["pair_id"])})
    try:
        with transaction.atomic():
            battle.save(force_insert=True)
            if code is not None:
                code.battle = battle
                code.save(force_insert=True)
    except IntegrityError:
        if not Battle.objects.filter(pair_id=row["pair_id"]).exists():
            raise
        return None
    return battle.id, battle.hold


def stored_hashes(pair_ids: list[str]) -> dict[str, str]:
    """pair id -> content hash of the ones already stored."""
    if not raw_sql():
        return dict(
            Battle.objects.filter(pair_id__in=pair_ids).values_list("pair_id", "content_hash")
        )
    # One array parameter instead of the ORM's IN list of 500 placeholders.
    with connection.cursor() as cursor:
        cursor.execute(_STORED_SQL, [pair_ids])
        return dict(cursor.fetchall())


def copy_rows(rows: Iterable[Row]) -> None:
    """Write code-less rows with COPY (PostgreSQL) or bulk inserts (other databases).

    One COPY is atomic on its own; inside a caller's transaction a savepoint keeps a failed
    COPY from breaking it (batch retries need that).
    """
    if not raw_sql():
        batch: list[Battle] = []
        for row in rows:
            batch.append(Battle(**row))
            if len(batch) >= 5000:
                Battle.objects.bulk_create(batch)
                batch = []
        Battle.objects.bulk_create(batch)
        return
    with (
        transaction.atomic() if connection.in_atomic_block else nullcontext(),
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.cursor.copy(_COPY_SQL) as copy,  # psycopg's cursor: Django's has no copy()
    ):
        for row in rows:
            copy.write_row([row[c] for c in COLUMNS])
