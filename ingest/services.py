"""Writes of the ingest app: store votes once, keep code only under Research, log completions."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
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
    key = settings.USER_ID_HMAC_KEY.encode()
    return hmac.new(key, user_id.encode(), hashlib.sha256).hexdigest()


def pseudonymise_ip(ip: str | None) -> str:
    if not ip:
        return ""
    key = settings.USER_ID_HMAC_KEY.encode()
    return hmac.new(key, b"ip:" + ip.encode(), hashlib.sha256).hexdigest()[:16]


def _content_hash(vote: VoteIn, user_hash: str) -> str:
    # What makes two posts of one pair id "the same vote": who, which models where, result.
    text = f"{vote.kind}|{user_hash}|{vote.model_a_id}|{vote.model_b_id}|{vote.outcome}"
    return hashlib.sha256(text.encode()).hexdigest()


def _build(
    vote: VoteIn, *, client: ApiClient | None, ip_hash: str
) -> tuple[Battle, CodeContext | None]:
    user_hash = vote.user_hash or pseudonymise_user(vote.user_id)
    battle = Battle(
        pair_id=vote.pair_id,
        user_hash=user_hash,
        model_a_id=vote.model_a_id,
        model_b_id=vote.model_b_id,
        outcome=vote.outcome,
        kind=vote.kind,
        file_type=vote.file_type,
        privacy=vote.privacy,
        latency_a_ms=vote.latency_a_ms,
        latency_b_ms=vote.latency_b_ms,
        prefix_chars=vote.prefix_chars,
        suffix_chars=vote.suffix_chars,
        client_version=vote.client_version,
        received_at=vote.received_at or timezone.now(),
        source=vote.source,
        client=client,
        ip_hash=ip_hash,
        content_hash=_content_hash(vote, user_hash),
        **label_fields(vote),
    )
    code = None
    if vote.keep_code:
        c = vote.code
        code = CodeContext(
            prefix=c.prefix,
            suffix=c.suffix,
            completion_a=c.completion_a,
            completion_b=c.completion_b,
            code_to_edit=c.code_to_edit,
            user_input=c.user_input,
            repo_url=c.repo_url,
        )
    return battle, code


def _after_votes() -> None:
    transaction.on_commit(votes_arrived)


def record_battle(
    *, vote: VoteIn, client: ApiClient | None = None, ip: str | None = None
) -> RecordResult:
    """Store one vote. A replay of a stored pair id is a no-op; a different vote raises."""
    battle, code = _build(vote, client=client, ip_hash=pseudonymise_ip(ip))
    try:
        with transaction.atomic():
            battle.save(force_insert=True)
            if code is not None:
                code.battle = battle
                code.save(force_insert=True)
    except IntegrityError:
        existing = (
            Battle.objects.filter(pair_id=vote.pair_id).values_list("id", "content_hash").first()
        )
        if existing is None:
            raise
        if existing[1] != battle.content_hash:
            raise PairConflict(vote.pair_id) from None
        return RecordResult(created=False, battle_id=existing[0])
    _after_votes()
    return RecordResult(created=True, battle_id=battle.id)


def record_battles(
    *, votes: list[VoteIn], client: ApiClient | None = None, ip: str | None = None
) -> BatchResult:
    """Store a batch all-or-nothing. Replays inside it are skipped; any conflict rejects it."""
    ip_hash = pseudonymise_ip(ip)
    built = [_build(vote, client=client, ip_hash=ip_hash) for vote in votes]
    for attempt in range(2):
        try:
            return _insert_batch(built)
        except IntegrityError:
            # A concurrent writer stored one of these pair ids between our check and insert.
            if attempt == 1:
                raise
    raise AssertionError("unreachable")


def _insert_batch(built: list[tuple[Battle, CodeContext | None]]) -> BatchResult:
    errors: dict[int, dict] = {}
    first_seen: dict[str, tuple[int, str]] = {}
    fresh: list[tuple[Battle, CodeContext | None]] = []
    for i, (battle, code) in enumerate(built):
        seen = first_seen.get(battle.pair_id)
        if seen is None:
            first_seen[battle.pair_id] = (i, battle.content_hash)
            fresh.append((battle, code))
        elif seen[1] != battle.content_hash:
            errors[i] = {
                "pair_id": [f"Repeats the pair id of item {seen[0]} with a different vote."]
            }
    if errors:
        raise BatchRejected(errors, conflict=False)

    stored = dict(
        Battle.objects.filter(pair_id__in=list(first_seen)).values_list("pair_id", "content_hash")
    )
    for i, (battle, _code) in enumerate(built):
        known = stored.get(battle.pair_id)
        if known is not None and known != battle.content_hash:
            errors[i] = {"pair_id": ["Already stored with a different vote."]}
    if errors:
        raise BatchRejected(errors, conflict=True)

    new = [(b, c) for b, c in fresh if b.pair_id not in stored]
    with transaction.atomic():
        Battle.objects.bulk_create([b for b, _ in new], batch_size=1000)
        codes = []
        for battle, code in new:
            if code is not None:
                code.battle_id = battle.id
                codes.append(code)
        if codes:
            CodeContext.objects.bulk_create(codes, batch_size=500)
    if new:
        _after_votes()
    return BatchResult(created=len(new), duplicates=len(built) - len(new))


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
