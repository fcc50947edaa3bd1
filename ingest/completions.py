"""Writes of shown completions: the latency log, single accepted completions, code under Research."""

from __future__ import annotations

from django.db import transaction

from .models import CompletionCode, CompletionLog, SingleOutcome
from .pseudonyms import pseudonymise_user
from .votes import CompletionIn


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
