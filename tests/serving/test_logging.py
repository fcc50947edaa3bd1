"""Completion logs of served pairs (``ingest.services.record_completions``)."""

from __future__ import annotations

import pytest

from ingest.completions import record_completions
from ingest.models import CompletionCode, CompletionLog
from ingest.pseudonyms import pseudonymise_user
from ingest.votes import CompletionIn


def completion(cid: str, model, privacy: str, **extra) -> CompletionIn:
    return CompletionIn(
        completion_id=cid,
        model_id=model.pk,
        user_id="machine-1",
        privacy=privacy,
        latency_ms=812.0,
        served_by_us=True,
        prompt="<PREFIX>def f(",
        completion="x):",
        **extra,
    )


@pytest.mark.django_db
def test_bulk_logging_is_idempotent_and_keeps_code_only_under_research(models):
    model = models["codestral-2405"]
    rows = [
        completion("c-research", model, "Research", pair_id="p", pair_index=0),
        completion("c-private", model, "Private", pair_id="p", pair_index=1),
        completion("c-failed", model, "Private", succeeded=False),
    ]
    record_completions(completions=rows)
    record_completions(completions=rows)  # a replay stores nothing more
    logs = {c.completion_id: c for c in CompletionLog.objects.all()}
    assert set(logs) == {"c-research", "c-private", "c-failed"}
    assert logs["c-research"].user_hash == pseudonymise_user("machine-1")
    assert (logs["c-private"].pair_id, logs["c-private"].pair_index) == ("p", 1)
    assert logs["c-failed"].succeeded is False and logs["c-private"].served_by_us
    assert list(CompletionCode.objects.values_list("completion_id", "prompt", "completion")) == [
        ("c-research", "<PREFIX>def f(", "x):")
    ]
