"""Writes of the ingest app: store votes once, keep code only under Research, log completions."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

import psycopg
from django.conf import settings
from django.db import IntegrityError, InterfaceError, OperationalError, connection, transaction
from django.utils import timezone

from leaderboard.triggers import votes_arrived

from .labelling import label_fields
from .models import (
    ApiClient,
    Battle,
    CodeContext,
    CompletionCode,
    CompletionLog,
    SingleOutcome,
)
from .votes import CompletionIn, VoteIn


class PairConflict(Exception):
    """The pair id is already stored with a different vote."""

    def __init__(self, pair_id: str):
        super().__init__(pair_id)
        self.pair_id = pair_id


class BatchRejected(Exception):
    """A batch had item errors; nothing of it was stored."""

    def __init__(self, errors: dict[int, dict], *, conflict: bool):
        super().__init__(errors)
        self.errors = errors
        self.conflict = conflict


@dataclass(frozen=True)
class RecordResult:
    created: bool
    battle_id: int


@dataclass(frozen=True)
class BatchResult:
    created: int
    duplicates: int


def pseudonymise_user(user_id: str) -> str:
    """HMAC-SHA256 of the client's user id: stable per user, not reversible without the key."""
    # hmac.digest: OpenSSL's one-shot HMAC, the same value as hmac.new(...).hexdigest().
    key = settings.USER_ID_HMAC_KEY.encode()
    return hmac.digest(key, user_id.encode(), "sha256").hex()


def pseudonymise_ip(ip: str | None) -> str:
    if not ip:
        return ""
    key = settings.USER_ID_HMAC_KEY.encode()
    return hmac.digest(key, b"ip:" + ip.encode(), "sha256").hex()[:16]


def _content_hash(vote: VoteIn, user_hash: str) -> str:
    # What makes two posts of one pair id "the same vote": who, which models where, result.
    text = f"{vote.kind}|{user_hash}|{vote.model_a_id}|{vote.model_b_id}|{vote.outcome}"
    return hashlib.sha256(text.encode()).hexdigest()


# --- Battle rows ------------------------------------------------------------------------
# Votes are written as plain rows (column -> value) rather than through Model.save(): the
# ORM's per-row work (instance set-up, SQL compilation, value preparation) was a fifth of a
# single vote's CPU and most of a batch's. Columns the vote does not set take the model's
# defaults, computed once.
_FIELDS = [f for f in Battle._meta.concrete_fields if not f.primary_key]
COLUMNS = tuple(f.attname for f in _FIELDS)
_ROW_DEFAULTS = {f.attname: f.get_default() for f in _FIELDS if f.attname not in ("received_at",)}
_TABLE = Battle._meta.db_table
_COLUMN_LIST = ", ".join(f'"{f.column}"' for f in _FIELDS)
# One statement, atomic on its own: a replayed pair id inserts nothing and returns no row,
# so no savepoint is needed to survive the duplicate, even inside a caller's transaction.
_INSERT_SQL = (
    f'INSERT INTO "{_TABLE}" ({_COLUMN_LIST}) VALUES ({", ".join(["%s"] * len(_FIELDS))}) '
    'ON CONFLICT ("pair_id") DO NOTHING RETURNING "id"'
)
_COPY_SQL = f'COPY "{_TABLE}" ({_COLUMN_LIST}) FROM STDIN'
_STORED_SQL = f'SELECT "pair_id", "content_hash" FROM "{_TABLE}" WHERE "pair_id" = ANY(%s)'


def _row(vote: VoteIn, *, client_id: int | None, ip_hash: str, now) -> dict:
    """The battle row of a vote, every column set (model defaults for the rest)."""
    user_hash = vote.user_hash or pseudonymise_user(vote.user_id)
    return {
        **_ROW_DEFAULTS,
        "pair_id": vote.pair_id,
        "user_hash": user_hash,
        "model_a_id": vote.model_a_id,
        "model_b_id": vote.model_b_id,
        # Plain values (not the Choices members the serializers hand over) for the driver.
        "outcome": int(vote.outcome),
        "kind": str(vote.kind),
        "file_type": vote.file_type,
        "privacy": str(vote.privacy),
        "latency_a_ms": vote.latency_a_ms,
        "latency_b_ms": vote.latency_b_ms,
        "prefix_chars": vote.prefix_chars,
        "suffix_chars": vote.suffix_chars,
        "client_version": vote.client_version,
        "received_at": vote.received_at or now,
        "source": str(vote.source),
        "client_id": client_id,
        "ip_hash": ip_hash,
        "content_hash": _content_hash(vote, user_hash),
        **label_fields(vote),
    }


def _code(vote: VoteIn) -> CodeContext | None:
    """The code to keep, only under Research privacy (never written otherwise)."""
    if not vote.keep_code:
        return None
    return CodeContext(**{name: getattr(vote.code, name) for name in CodeContext.FIELDS})


def _raw_sql() -> bool:
    # The hand-written SQL (ON CONFLICT, = ANY, COPY, prepared statements) is PostgreSQL's;
    # other databases (the embedded SQLite) take the ORM path.
    return connection.vendor == "postgresql"


def _after_votes() -> None:
    transaction.on_commit(votes_arrived)


# --- One vote -------------------------------------------------------------------------


def _insert_raw(params: list) -> int | None:
    """Run `_INSERT_SQL`; the new id, or None when the pair id is already stored.

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
        return None if row is None else row[0]
    try:
        return _execute_raw(params)
    except (OperationalError, InterfaceError):
        if not may_retry or connection.is_usable():
            raise  # not a dead connection
        connection.close()
        connection.ensure_connection()
        return _execute_raw(params)


def _execute_raw(params: list) -> int | None:
    connection.validate_no_broken_transaction()
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(_INSERT_SQL, params)
        row = cursor.fetchone()
    return None if row is None else row[0]


def _insert_one(row: dict, code: CodeContext | None) -> int | None:
    """Store one battle (and its code); None when its pair id is already stored."""
    if not _raw_sql():
        return _insert_one_orm(row, code)
    params = [row[c] for c in COLUMNS]
    if code is None:
        return _insert_raw(params)
    with transaction.atomic():
        battle_id = _insert_raw(params)
        if battle_id is not None:
            code.battle_id = battle_id
            code.save(force_insert=True)
    return battle_id


def _insert_one_orm(row: dict, code: CodeContext | None) -> int | None:
    battle = Battle(**row)
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
    return battle.id


def record_battle(
    *, vote: VoteIn, client: ApiClient | None = None, ip: str | None = None
) -> RecordResult:
    """Store one vote. A replay of a stored pair id is a no-op; a different vote raises."""
    row = _row(
        vote,
        client_id=client.pk if client is not None else None,
        ip_hash=pseudonymise_ip(ip),
        now=timezone.now(),
    )
    code = _code(vote)
    for _attempt in range(2):
        battle_id = _insert_one(row, code)
        if battle_id is not None:
            _after_votes()
            return RecordResult(created=True, battle_id=battle_id)
        # Nothing inserted: the pair id is stored. The same vote is a replay, else a conflict.
        existing = (
            Battle.objects.filter(pair_id=vote.pair_id).values_list("id", "content_hash").first()
        )
        if existing is not None:
            if existing[1] != row["content_hash"]:
                raise PairConflict(vote.pair_id)
            return RecordResult(created=False, battle_id=existing[0])
        # Deleted between the two statements (only simulated battles ever are): try again.
    raise IntegrityError(f"pair id {vote.pair_id!r} neither stored nor insertable")


# --- Batches --------------------------------------------------------------------------


def record_battles(
    *, votes: list[VoteIn], client: ApiClient | None = None, ip: str | None = None
) -> BatchResult:
    """Store a batch all-or-nothing. Replays inside it are skipped; any conflict rejects it."""
    ip_hash = pseudonymise_ip(ip)
    client_id = client.pk if client is not None else None
    now = timezone.now()
    rows = [_row(vote, client_id=client_id, ip_hash=ip_hash, now=now) for vote in votes]
    codes = [_code(vote) for vote in votes]
    for attempt in range(2):
        try:
            return _insert_batch(rows, codes)
        except IntegrityError:
            # A concurrent writer stored one of these pair ids between our check and insert.
            if attempt == 1:
                raise
    raise AssertionError("unreachable")


def _stored_hashes(pair_ids: list[str]) -> dict[str, str]:
    """pair id -> content hash of the ones already stored."""
    if not _raw_sql():
        return dict(
            Battle.objects.filter(pair_id__in=pair_ids).values_list("pair_id", "content_hash")
        )
    # One array parameter instead of the ORM's IN list of 500 placeholders.
    with connection.cursor() as cursor:
        cursor.execute(_STORED_SQL, [pair_ids])
        return dict(cursor.fetchall())


def _copy_rows(rows: list[dict]) -> None:
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.cursor.copy(_COPY_SQL) as copy,  # psycopg's cursor: Django's has no copy()
    ):
        for row in rows:
            copy.write_row([row[c] for c in COLUMNS])


def _insert_batch(rows: list[dict], codes: list[CodeContext | None]) -> BatchResult:
    errors: dict[int, dict] = {}
    first_seen: dict[str, tuple[int, str]] = {}
    fresh: list[int] = []
    for i, row in enumerate(rows):
        seen = first_seen.get(row["pair_id"])
        if seen is None:
            first_seen[row["pair_id"]] = (i, row["content_hash"])
            fresh.append(i)
        elif seen[1] != row["content_hash"]:
            errors[i] = {
                "pair_id": [f"Repeats the pair id of item {seen[0]} with a different vote."]
            }
    if errors:
        raise BatchRejected(errors, conflict=False)

    stored = _stored_hashes(list(first_seen))
    for i, row in enumerate(rows):
        known = stored.get(row["pair_id"])
        if known is not None and known != row["content_hash"]:
            errors[i] = {"pair_id": ["Already stored with a different vote."]}
    if errors:
        raise BatchRejected(errors, conflict=True)

    new = [i for i in fresh if rows[i]["pair_id"] not in stored]
    if new:
        if _raw_sql() and all(codes[i] is None for i in new):
            # No code to keep (Private / Debug): COPY the rows, several times cheaper than
            # INSERTs. One statement is atomic on its own; inside a caller's transaction a
            # savepoint keeps a failed COPY from breaking it (the retry needs that).
            if connection.in_atomic_block:
                with transaction.atomic():
                    _copy_rows([rows[i] for i in new])
            else:
                _copy_rows([rows[i] for i in new])
        else:
            # Research batches need the new ids for their code rows.
            with transaction.atomic():
                battles = Battle.objects.bulk_create(
                    [Battle(**rows[i]) for i in new], batch_size=1000
                )
                kept = []
                for i, battle in zip(new, battles, strict=True):
                    if codes[i] is not None:
                        codes[i].battle_id = battle.id
                        kept.append(codes[i])
                if kept:
                    CodeContext.objects.bulk_create(kept, batch_size=500)
        _after_votes()
    return BatchResult(created=len(new), duplicates=len(rows) - len(new))


def _log_fields(completion: CompletionIn) -> dict:
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
    }


def record_completion(*, completion: CompletionIn) -> bool:
    """Log a shown completion (latency statistics). Returns False for a replayed id."""
    with transaction.atomic():
        _, created = CompletionLog.objects.get_or_create(
            completion_id=completion.completion_id, defaults=_log_fields(completion)
        )
        if created and completion.keep_code:
            _keep_completion_code(completion)
    return created


def record_completions(*, completions: list[CompletionIn]) -> None:
    """Log several completions at once (the pair server logs every call of a pair together):
    one INSERT for the logs and one for the code, instead of a lookup and a savepoint per
    row. Replayed ids are skipped; code is kept only under Research, as in
    `record_completion`."""
    with transaction.atomic():
        CompletionLog.objects.bulk_create(
            [CompletionLog(completion_id=c.completion_id, **_log_fields(c)) for c in completions],
            ignore_conflicts=True,
        )
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


def issue_api_key(
    *, name: str, created_by=None, rate_limit_per_minute: int | None = None
) -> tuple[ApiClient, str]:
    """Create a client and return it with its key. The key is not stored and cannot be shown again."""
    from .auth import hash_key, new_key

    key, prefix = new_key()
    client = ApiClient.objects.create(
        name=name,
        key_prefix=prefix,
        key_hash=hash_key(key),
        created_by=created_by,
        rate_limit_per_minute=rate_limit_per_minute,
    )
    return client, key


def revoke_api_key(*, client: ApiClient) -> None:
    """Revoke a key: at once in this process, within auth.CLIENT_CACHE_SECONDS in the others."""
    from .auth import forget_client

    ApiClient.objects.filter(pk=client.pk, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    forget_client(client.key_prefix)
