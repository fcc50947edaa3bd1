"""Writes of votes: store each vote once, keep code only under Research, all-or-nothing batches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import ApplicationError, Conflict, flatten_errors, summary
from core.models import ApiClient

from . import binding
from . import rows as battle_rows
from .models import Battle, CodeContext
from .pseudonyms import pseudonymise_ip
from .rows import Row, battle_row, copy_rows, insert_one, stored_hashes
from .triggers import votes_arrived
from .votes import VoteIn


class PairConflict(Conflict):
    """The pair id is already stored with a different vote."""

    def __init__(self, pair_id: str):
        msg = "Already stored with a different vote (same pair id, different models, user or outcome)."
        super().__init__(f"pair_id '{pair_id}': {msg}", fields={"pair_id": [msg]})
        self.pair_id = pair_id


class BatchRejected(ApplicationError):
    """A batch had item errors; nothing of it was stored."""

    def __init__(self, errors: dict[int, dict[str, Any]], *, conflict: bool) -> None:
        fields = flatten_errors({"battles": {str(i): e for i, e in sorted(errors.items())}})
        super().__init__("Nothing was stored. " + summary(fields), fields=fields)
        self.status = 409 if conflict else 400
        self.code = "conflict" if conflict else "invalid"
        self.errors = errors
        self.conflict = conflict


@dataclass(frozen=True)
class RecordResult:
    created: bool
    battle_id: int
    hold: str = ""  # why the vote is held out of the board (ingest.models.Hold), if it is


@dataclass(frozen=True)
class BatchResult:
    created: int
    duplicates: int


def _code(vote: VoteIn) -> CodeContext | None:
    """The code to keep, only under Research privacy (never written otherwise)."""
    if not vote.keep_code:
        return None
    return CodeContext(**{name: getattr(vote.code, name) for name in CodeContext.FIELDS})


def _after_votes() -> None:
    transaction.on_commit(votes_arrived)


def record_battle(
    *, vote: VoteIn, client: ApiClient | None = None, ip: str | None = None
) -> RecordResult:
    """Store one vote. A replay of a stored pair id is a no-op; a different vote raises.

    Votes without an API key are bound to served pairs while pair serving is on
    (ingest/binding.py): one that matches no served pair is stored held as unverified."""
    row = battle_row(
        vote,
        client_id=client.pk if client is not None else None,
        ip_hash=pseudonymise_ip(ip),
        now=timezone.now(),
        bind=binding.applies(vote=vote, client=client),
    )
    code = _code(vote)
    for _attempt in range(2):
        stored = insert_one(row, code)
        if stored is not None:
            _after_votes()
            return RecordResult(created=True, battle_id=stored[0], hold=stored[1])
        # Nothing inserted: the pair id is stored. The same vote is a replay, else a conflict.
        existing = (
            Battle.objects.filter(pair_id=vote.pair_id)
            .values_list("id", "content_hash", "hold")
            .first()
        )
        if existing is not None:
            if existing[1] != row["content_hash"]:
                raise PairConflict(vote.pair_id)
            return RecordResult(created=False, battle_id=existing[0], hold=existing[2])
        # Deleted between the two statements (only simulated battles ever are): try again.
    raise IntegrityError(f"pair id {vote.pair_id!r} neither stored nor insertable")


def record_battles(
    *, votes: list[VoteIn], client: ApiClient | None = None, ip: str | None = None
) -> BatchResult:
    """Store a batch all-or-nothing. Replays inside it are skipped; any conflict rejects it."""
    ip_hash = pseudonymise_ip(ip)
    client_id = client.pk if client is not None else None
    now = timezone.now()
    rows = [battle_row(vote, client_id=client_id, ip_hash=ip_hash, now=now) for vote in votes]
    codes = [_code(vote) for vote in votes]
    for attempt in range(2):
        try:
            return _insert_batch(rows, codes)
        except IntegrityError:
            # A concurrent writer stored one of these pair ids between our check and insert.
            if attempt == 1:
                raise
    raise AssertionError("unreachable")


def _insert_batch(rows: list[Row], codes: list[CodeContext | None]) -> BatchResult:
    errors: dict[int, dict[str, Any]] = {}
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

    stored = stored_hashes(list(first_seen))
    for i, row in enumerate(rows):
        known = stored.get(row["pair_id"])
        if known is not None and known != row["content_hash"]:
            errors[i] = {"pair_id": ["Already stored with a different vote."]}
    if errors:
        raise BatchRejected(errors, conflict=True)

    new = [i for i in fresh if rows[i]["pair_id"] not in stored]
    if new:
        if battle_rows.raw_sql() and all(codes[i] is None for i in new):
            # No code to keep (Private / Debug): COPY the rows, several times cheaper than
            # INSERTs.
            copy_rows(rows[i] for i in new)
        else:
            # Research batches need the new ids for their code rows.
            with transaction.atomic():
                battles = Battle.objects.bulk_create(
                    [Battle(**rows[i]) for i in new], batch_size=1000
                )
                kept = []
                for i, battle in zip(new, battles, strict=True):
                    code = codes[i]
                    if code is not None:
                        code.battle_id = battle.id
                        kept.append(code)
                if kept:
                    CodeContext.objects.bulk_create(kept, batch_size=500)
        # Votes of pairs our server drew take its sampler probability (single votes do it
        # in their INSERT, rows.insert_one).
        battle_rows.fill_pair_probabilities([rows[i]["pair_id"] for i in new])
        _after_votes()
    return BatchResult(created=len(new), duplicates=len(rows) - len(new))
