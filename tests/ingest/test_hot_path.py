"""The vote hot path's shortcuts keep their promises (issue 2).

- API keys: rows cached per process for a few seconds; a revocation works at once in the
  revoking process and within the cache time everywhere; usage tallied in memory.
- Throttles: counters in Redis under the site's prefix, in process memory without Redis.
- The vote trigger: one scheduled recompute per window, another for votes after it started.
- Storing: the raw INSERT writes the same row as the ORM; a dead connection is replaced.
"""

from __future__ import annotations

import json
import time

import psycopg
import pytest
from django.core.cache import cache
from django.db import connection
from django.utils import timezone

import core.auth as auth
import ingest.rows as rows
import ingest.triggers as triggers
from core.models import ApiClient
from core.redis_client import shared_redis
from core.services import issue_api_key, revoke_api_key
from ingest.models import Battle, CodeContext
from leaderboard import tasks
from tests.ingest.payloads import batch, vote

URL = "/api/v1/battles"


def post(client, body, url=URL):
    return client.post(url, data=json.dumps(body), content_type="application/json")


# --- API keys ---------------------------------------------------------------------------


@pytest.fixture
def keyed(api, models):
    client, key = issue_api_key(name="hot path")
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return api, client


def test_revocation_takes_effect_at_once_in_the_revoking_process(keyed):
    api, client = keyed
    assert post(api, vote(pair_id="a")).status_code == 201  # the row is cached now
    revoke_api_key(client=client)
    r = post(api, vote(pair_id="b"))
    assert r.status_code == 401 and "revoked" in r.json()["message"]


def test_revocation_by_another_process_takes_effect_within_the_cache_time(keyed, monkeypatch):
    api, client = keyed
    assert post(api, vote(pair_id="a")).status_code == 201
    # Another process revoked it: this one does not know until its cached row expires.
    ApiClient.objects.filter(pk=client.pk).update(revoked_at=timezone.now())
    assert post(api, vote(pair_id="b")).status_code == 201
    # The cache time passes (rather than sleeping through it): the next vote rereads the row.
    monkeypatch.setattr(auth, "CLIENT_CACHE_SECONDS", 0.0)
    assert post(api, vote(pair_id="c")).status_code == 401
    assert set(Battle.objects.values_list("pair_id", flat=True)) == {"a", "b"}


def test_saving_the_client_clears_its_cached_row(keyed):
    api, client = keyed
    assert post(api, vote(pair_id="a")).status_code == 201
    client.rate_limit_per_minute = 1  # an admin sets a limit: seen at once, not in 5 s
    client.save()
    codes = [post(api, vote(pair_id=p)).status_code for p in ("b", "c")]
    assert codes == [201, 429]


def test_usage_is_tallied_in_memory_and_written_once_a_minute(keyed, monkeypatch):
    api, client = keyed
    for i in range(3):
        assert post(api, vote(pair_id=f"u{i}")).status_code == 201
    client.refresh_from_db()
    assert client.request_count == 1  # the first request writes, the next two wait
    monkeypatch.setattr(auth, "USAGE_FLUSH_SECONDS", 0)
    assert post(api, vote(pair_id="u3")).status_code == 201
    client.refresh_from_db()
    assert client.request_count == 4 and client.last_used_at is not None


def test_unknown_prefixes_are_not_cached(api, models):
    api.credentials(HTTP_AUTHORIZATION="Bearer arena_ffffffff_nope")
    assert post(api, vote()).status_code == 401
    assert "ffffffff" not in auth._clients


# --- Throttles ----------------------------------------------------------------------------


def test_throttle_counters_live_in_redis_under_the_sites_prefix(api, models):
    r = shared_redis()
    assert post(api, vote()).status_code == 201
    keys = sorted(k.decode() for k in r.keys("arena:thr*"))
    assert len(keys) == 2
    assert ["vote_ip" in k for k in keys].count(True) == 1
    assert ["vote_user" in k for k in keys].count(True) == 1
    for k in keys:
        assert r.get(k) == b"1" and 0 < r.ttl(k) <= 61


def test_throttles_count_in_memory_without_redis(api, models, settings):
    settings.REDIS_URL = ""  # embedded mode
    settings.ARENA_THROTTLE_RATES = {**settings.ARENA_THROTTLE_RATES, "vote_user": "2/min"}
    codes = [post(api, vote(pair_id=f"e{i}", user_id="memory-user")).status_code for i in range(3)]
    assert codes == [201, 201, 429]
    assert shared_redis() is None


# --- The vote trigger -------------------------------------------------------------------


@pytest.fixture
def scheduled(settings, monkeypatch):
    """votes_arrived on, and a record of the recomputes it scheduled."""
    settings.RECOMPUTE_ON_VOTES = True
    settings.RECOMPUTE_DEBOUNCE_SECONDS = 30
    runs: list[dict] = []
    monkeypatch.setattr(tasks.recompute_leaderboard, "apply_async", lambda *a, **k: runs.append(k))
    return runs


def test_flag_is_the_cache_key_the_task_clears(scheduled):
    triggers.votes_arrived()
    assert cache.get(tasks.PENDING_KEY) == 1
    assert shared_redis().ttl(cache.make_key(tasks.PENDING_KEY)) > 30
    cache.delete(tasks.PENDING_KEY)  # what the recompute does before it reads
    assert shared_redis().get(cache.make_key(tasks.PENDING_KEY)) is None


def test_one_run_per_window_and_another_for_votes_after_it_started(scheduled):
    for _ in range(20):
        triggers.votes_arrived()
    assert scheduled == [{"kwargs": {"trigger": "votes"}, "countdown": 30}]
    cache.delete(tasks.PENDING_KEY)  # the run starts reading
    triggers.votes_arrived()  # a vote it may not have read: a second run
    triggers.votes_arrived()
    assert len(scheduled) == 2


def test_a_task_that_could_not_be_published_is_asked_for_again(scheduled, monkeypatch):
    def broker_down(*args, **kwargs):
        raise OSError("broker unreachable")

    monkeypatch.setattr(tasks.recompute_leaderboard, "apply_async", broker_down)
    triggers.votes_arrived()  # does not raise: the vote is stored anyway
    assert cache.get(tasks.PENDING_KEY) is None  # so the next vote tries again


# --- Storing ----------------------------------------------------------------------------


COMPARED = [f.attname for f in Battle._meta.concrete_fields if f.attname not in ("id", "pair_id")]


def test_raw_insert_writes_what_the_orm_writes(api, models, monkeypatch):
    body = vote(privacy="Research", prefix="def f(x):\n    ", suffix="\n", completion_a="x")
    assert post(api, {**body, "pair_id": "raw"}).status_code == 201
    monkeypatch.setattr(rows, "raw_sql", lambda: False)
    assert post(api, {**body, "pair_id": "orm"}).status_code == 201
    raw, orm = (Battle.objects.values(*COMPARED).get(pair_id=p) for p in ("raw", "orm"))
    assert abs((raw.pop("received_at") - orm.pop("received_at")).total_seconds()) < 600  # both now
    assert raw == orm
    assert CodeContext.objects.count() == 2


def test_orm_path_keeps_replay_and_conflict_semantics(api, models, monkeypatch):
    monkeypatch.setattr(rows, "raw_sql", lambda: False)
    assert post(api, vote()).status_code == 201
    r = post(api, vote())
    assert r.status_code == 200 and r.json()["status"] == "duplicate"
    assert post(api, vote(outcome="tie")).status_code == 409
    assert post_batch_status(api, monkeypatch) == (201, {"created": 2, "duplicates": 1})


def post_batch_status(api, monkeypatch):
    _client, key = issue_api_key(name="batch")
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    body = batch(2)
    body["battles"].append(vote())  # p-1 is stored already
    r = post(api, body, "/api/v1/battles/batch")
    return r.status_code, r.json()


def test_research_batch_keeps_code_and_private_batch_does_not(keyed_api, models):
    body = batch(3, privacy="Research", prefix="import os\n", completion_a="os.getcwd()")
    r = post(keyed_api, body, "/api/v1/battles/batch")
    assert r.status_code == 201 and r.json() == {"created": 3, "duplicates": 0}
    assert CodeContext.objects.filter(prefix="import os\n").count() == 3
    # Same votes (privacy is not part of a vote's identity) and two new ones, without code.
    body = batch(5, privacy="Private", prefix="import sys\n")
    r = post(keyed_api, body, "/api/v1/battles/batch")
    assert r.status_code == 201 and r.json() == {"created": 2, "duplicates": 3}
    assert CodeContext.objects.count() == 3
    assert Battle.objects.filter(privacy="Private", code__isnull=True).count() == 2


def test_a_dead_connection_is_replaced_without_failing_the_vote(transactional_db, api, models):
    assert post(api, vote(pair_id="before")).status_code == 201
    pid = connection.connection.info.backend_pid
    with psycopg.connect(_dsn(), autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
        _wait_for(
            lambda: (
                not other.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone()
            )
        )
    r = post(api, vote(pair_id="after"))
    assert r.status_code == 201, r.content
    assert connection.connection.info.backend_pid != pid
    assert set(Battle.objects.values_list("pair_id", flat=True)) == {"before", "after"}


def _wait_for(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def _dsn() -> str:
    s = connection.settings_dict
    return (
        f"postgresql://{s['USER']}:{s['PASSWORD'] or ''}@{s['HOST'] or 'localhost'}:"
        f"{s['PORT'] or 5432}/{s['NAME']}"
    )


def test_labels_of_votes_without_code_are_memoised_and_unchanged():
    from analysis.labels import LABELER_VERSION, label_context
    from ingest.labelling import label_fields
    from ingest.votes import VoteIn

    for file_type in ("python", "typescriptreact", "", "no-such-language"):
        v = VoteIn("p", "u", 1, 2, 0, "completion", "Private", "api", file_type=file_type)
        labels = label_context(file_type=file_type, prefix="", suffix="")
        expected = {
            "language": labels.programming_language,
            "natural_language": labels.natural_language,
            "context_tokens": None,
            "context_bucket": "unknown",
            "task_type": labels.task_type,
            "labeler_version": LABELER_VERSION,
        }
        first = label_fields(v)
        assert first == expected and label_fields(v) == expected
        first["language"] = "changed"  # callers get a copy, not the memoised dict
        assert label_fields(v) == expected
