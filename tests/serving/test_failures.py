"""When a provider fails or is slow: substitutes, clear 5xx errors, no hanging; no secrets
or Private code anywhere."""

from __future__ import annotations

import json
import logging
import threading
import time

import psycopg
import pytest
from django.db import connection, connections

from ingest.models import CompletionCode, CompletionLog
from serving.models import ModelProvider
from tests.ingest.helpers import all_text_in_database
from tests.serving.conftest import SECRET
from tests.serving.test_create_pair import PREFIX, SUFFIX, post_pair


@pytest.fixture
def two(served):
    """Only the chat model and Codestral are served."""
    ModelProvider.objects.filter(model__key="deepseek-coder-fim").update(enabled=False)
    return served


def test_timeout_on_one_side_gets_a_substitute(api, served, stub, settings):
    settings.SERVING_SUBSTITUTE_MIN_SECONDS = 0.5
    ModelProvider.objects.filter(model__key="codestral-2405").update(timeout_seconds=0.5)
    stub.behave("stub-codestral", hang=True)
    stub.behave("stub-gpt", latency=0.1)
    stub.behave("stub-deepseek", latency=0.1)
    for _ in range(8):  # enough draws that codestral is in some first pair
        started = time.perf_counter()
        response = post_pair(api)
        elapsed = time.perf_counter() - started
        assert response.status_code == 200, response.content
        models = {i["model"] for i in response.json()["completionItems"]}
        assert models == {"gpt-4o-2024-08-06", "deepseek-coder-fim"}
        assert elapsed < 60  # the 0.5 s timeout, not the hang (which never ends)
    failed = CompletionLog.objects.filter(model__key="codestral-2405")
    assert failed.exists()
    assert all(not row.succeeded and row.served_by_us for row in failed)
    assert all(row.pair_index is None for row in failed)
    assert all(row.latency_ms >= 450 for row in failed)  # at least the timeout


def test_substitute_keeps_the_failed_sides_position(api, served, stub, settings):
    settings.SERVING_SUBSTITUTE_MIN_SECONDS = 0.2
    stub.behave("stub-codestral", status=500)
    for _ in range(10):
        response = post_pair(api)
        assert response.status_code == 200, response.content
        items = response.json()["completionItems"]
        assert [i["pairIndex"] for i in items] == [0, 1]
        assert "codestral-2405" not in {i["model"] for i in items}
    # A failed call's pair id links it to the pair it was drawn for.
    for row in CompletionLog.objects.filter(model__key="codestral-2405"):
        assert row.pair_id and not row.succeeded


def test_timeout_without_time_for_a_substitute_is_a_clear_504(api, two, stub, settings):
    settings.SERVING_PAIR_DEADLINE_SECONDS = 1.0
    settings.SERVING_SUBSTITUTE_MIN_SECONDS = 0.5
    stub.behave("stub-codestral", hang=True)
    started = time.perf_counter()
    response = post_pair(api)
    elapsed = time.perf_counter() - started
    assert response.status_code == 504, response.content
    body = response.json()
    assert body["error"] == "provider_timeout"
    assert "codestral-2405" in body["message"] and "did not answer in time" in body["message"]
    assert 1.0 <= elapsed < 60, elapsed  # the deadline, not the hang (which never ends)
    rows = {r.model.key: r for r in CompletionLog.objects.all()}
    assert rows["codestral-2405"].succeeded is False
    assert rows["gpt-4o-2024-08-06"].succeeded is True  # its latency still counts


def test_only_two_models_and_one_errors_is_a_502(api, two, stub):
    stub.behave("stub-gpt", status=503)
    response = post_pair(api)
    assert response.status_code == 502, response.content
    assert response.json()["error"] == "provider_error"
    assert "HTTP 503" in response.json()["message"]


def test_a_failing_pair_does_not_wait_for_the_slow_side(api, two, stub):
    # One side fails at once with no substitute possible: the answer does not wait for the
    # other side's 3 s.
    stub.behave("stub-gpt", status=500)
    stub.behave("stub-codestral", latency=3.0)
    response = post_pair(api)
    assert response.status_code == 502
    assert stub.in_flight >= 1  # answered while the slow side was still being waited on


def test_provider_at_its_concurrency_limit_is_substituted(api, served, stub, settings):
    # max_concurrency=1 and a call already in flight: a second pair must not queue behind it.
    import asyncio

    from serving.engine import engine
    from serving.selectors import serving_state

    settings.SERVING_SUBSTITUTE_MIN_SECONDS = 0.2
    ModelProvider.objects.filter(model__key="gpt-4o-2024-08-06").update(max_concurrency=1)
    stub.behave("stub-gpt", latency=1.0)
    state = serving_state()
    slot = next(s for s in state.slots if s.key == "gpt-4o-2024-08-06")
    sem = engine()._semaphore(slot.provider)
    # Hold the only slot from the engine's loop, as an in-flight call would.
    asyncio.run_coroutine_threadsafe(sem.acquire(), engine().loop).result(5)
    try:
        for _ in range(6):
            response = post_pair(api)
            assert response.status_code == 200
            assert "gpt-4o-2024-08-06" not in {
                i["model"] for i in response.json()["completionItems"]
            }
    finally:
        engine().loop.call_soon_threadsafe(sem.release)
    assert stub.for_model("stub-gpt") == []
    busy = CompletionLog.objects.filter(model__key="gpt-4o-2024-08-06")
    assert busy.exists() and not any(r.succeeded for r in busy)


def test_provider_limit_holds_across_processes(api, served, stub, settings):
    # Another pairs process (here: its slot in Redis) holds the provider's only slot: this
    # process, with its own semaphore free, must not call the provider either.
    if not settings.REDIS_URL:
        pytest.skip("the limit across processes lives in Redis")
    from core.redis_client import shared_redis
    from core.semaphore import ACQUIRE, semaphore_key

    settings.SERVING_SUBSTITUTE_MIN_SECONDS = 0.2
    ModelProvider.objects.filter(model__key="gpt-4o-2024-08-06").update(max_concurrency=1)
    provider = ModelProvider.objects.get(model__key="gpt-4o-2024-08-06")
    key = semaphore_key("pairsem", str(provider.pk))
    client = shared_redis()
    assert client.register_script(ACQUIRE)(keys=[key], args=[1, 60, "elsewhere"]) == 1
    try:
        for _ in range(6):
            response = post_pair(api)
            assert response.status_code == 200
            assert "gpt-4o-2024-08-06" not in {
                i["model"] for i in response.json()["completionItems"]
            }
        assert stub.for_model("stub-gpt") == []
    finally:
        client.zrem(key, "elsewhere")
    # Freed elsewhere: this process calls it again, and gives its slot back after each call.
    for _ in range(20):
        post_pair(api)
        if stub.for_model("stub-gpt"):
            break
    assert stub.for_model("stub-gpt")
    assert client.zcard(key) == 0


def test_secrets_never_appear_in_responses_logs_or_database(api, two, stub, caplog, settings):
    caplog.set_level(logging.DEBUG)
    settings.SERVING_SUBSTITUTE_MIN_SECONDS = 0.2
    ok = post_pair(api)
    stub.behave("stub-gpt", status=401)  # its error body echoes the Authorization header
    failed = post_pair(api)
    assert ok.status_code == 200 and failed.status_code == 502
    # The key was really sent...
    assert all(r.headers["authorization"] == f"Bearer {SECRET}" for r in stub.requests)
    # ...and is nowhere else.
    assert SECRET not in ok.content.decode() + failed.content.decode()
    assert SECRET not in caplog.text
    assert "Incorrect API key" not in caplog.text + failed.content.decode()
    assert SECRET not in all_text_in_database()
    from serving.models import ModelProvider as P

    assert SECRET not in json.dumps(list(P.objects.values()), default=str)


def test_admin_never_shows_the_secret(admin_client, two, stub):
    provider = ModelProvider.objects.get(model__key="gpt-4o-2024-08-06")
    page = admin_client.get(f"/admin/serving/modelprovider/{provider.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "STUB_PROVIDER_KEY" in html and "set" in html
    assert SECRET not in html
    listing = admin_client.get("/admin/serving/modelprovider/").content.decode()
    assert SECRET not in listing


def test_a_pasted_key_is_refused_as_the_variable_name(db, stub):
    from django.core.exceptions import ValidationError

    from tests.factories import ArenaModelFactory

    provider = ModelProvider(
        model=ArenaModelFactory(key="m-pasted"),
        kind="openai_chat",
        base_url="https://user:pw@example.com/v1",
        remote_model="x",
        api_key_env=SECRET,
    )
    with pytest.raises(ValidationError) as err:
        provider.full_clean()
    assert set(err.value.message_dict) == {"api_key_env", "base_url"}


def test_missing_key_at_call_time_is_a_failure_not_a_leak(api, two, stub, monkeypatch, caplog):
    from serving.selectors import serving_state

    serving_state()  # loaded while the key was set
    monkeypatch.delenv("STUB_PROVIDER_KEY")
    response = post_pair(api)
    assert response.status_code == 502
    assert "no API key" in response.json()["message"]
    assert stub.requests == []


@pytest.mark.parametrize("privacy", ["Private", "Debug"])
def test_private_code_is_never_stored_or_logged(api, served, stub, caplog, privacy):
    caplog.set_level(logging.DEBUG)
    marker = "SECRET_ALGORITHM_7f3a"
    stub.behave("stub-gpt", middle=f"{marker}_middle()")
    stub.behave("stub-codestral", middle=f"{marker}_middle()")
    stub.behave("stub-deepseek", middle=f"{marker}_middle()")
    response = post_pair(api, prefix=f"def {marker}():\n    ", privacy=privacy)
    assert response.status_code == 200
    assert marker in response.json()["completionItems"][0]["completion"]  # shown to the user
    assert CompletionLog.objects.count() == 2
    assert CompletionCode.objects.count() == 0
    assert marker not in all_text_in_database()
    assert marker not in caplog.text


def test_research_keeps_prompt_and_completion_of_shown_sides_only(api, served, stub, settings):
    settings.SERVING_SUBSTITUTE_MIN_SECONDS = 0.2
    stub.behave("stub-codestral", status=500)
    response = post_pair(api, privacy="Research")
    assert response.status_code == 200
    items = {i["completionId"]: i for i in response.json()["completionItems"]}
    kept = {c.completion_id: c for c in CompletionCode.objects.all()}
    assert set(kept) == set(items)
    for cid, code in kept.items():
        assert code.completion == items[cid]["completion"]
        assert code.prompt == items[cid]["prompt"]
        assert PREFIX in code.prompt and (SUFFIX in code.prompt or code.prompt == PREFIX)


def test_unreachable_provider_is_substituted(api, served, stub, settings):
    settings.SERVING_SUBSTITUTE_MIN_SECONDS = 0.2
    ModelProvider.objects.filter(model__key="codestral-2405").update(
        base_url="http://127.0.0.1:9/v1"  # discard port: connection refused
    )
    for _ in range(6):
        response = post_pair(api)
        assert response.status_code == 200
        assert "codestral-2405" not in {i["model"] for i in response.json()["completionItems"]}


def test_answer_without_a_completion_is_a_failure_and_empty_text_is_not(api, two, stub):
    stub.behave("stub-gpt", malformed=True)
    response = post_pair(api)
    assert response.status_code == 502
    assert "answered without a completion" in response.json()["message"]
    stub.behave("stub-gpt", raw="<CODE></CODE>")
    stub.behave("stub-codestral", raw="")  # nothing to insert is a valid answer
    response = post_pair(api)
    assert response.status_code == 200, response.content
    assert [i["completion"] for i in response.json()["completionItems"]] == ["", ""]


# Several idle connections, fewer than DATABASE_POOL_SIZE: another thread of the test process
# (a live server's) may hold one, and a thread the pool cannot serve must not block the rest.
POOL_GROWN = 4


@pytest.mark.django_db(transaction=True)
def test_a_postgresql_restart_costs_no_request(api, served, stub):
    """Connections a restart left dead are found when taken from the pool, not by a request."""
    assert post_pair(api, pairId="before-restart").status_code == 200
    connection.close()  # this thread's connection goes back to the pool, as after a request
    # A busy process's pool holds several idle connections; a restart leaves all of them dead.
    together = threading.Barrier(POOL_GROWN, timeout=120)
    failures: list[BaseException] = []

    def query() -> None:
        # Every thread holds its connection until all have one, so the pool grows to hold them.
        try:
            with connections["default"].cursor() as cursor:
                cursor.execute("SELECT 1")
                together.wait()
        except BaseException as exc:  # reported below; a broken barrier frees the others
            failures.append(exc)
            together.abort()
        finally:
            connections["default"].close()

    threads = [threading.Thread(target=query) for _ in range(POOL_GROWN)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    params = connection.get_connection_params()
    params.pop("pool", None)
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.pop("prepare_threshold", None)
    with psycopg.connect(**params, autocommit=True) as admin:
        # What a restart does to this process's pooled connections.
        pids = [
            pid
            for (pid,) in admin.execute(
                "SELECT pid FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchall()
        ]
        assert pids
        admin.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", [pids])
        # pg_terminate_backend only signals: wait until the backends are gone, as they are
        # once a restart is over (a busy machine can take a while to end them)
        deadline = time.monotonic() + 60
        while admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s::int[])", [pids]
        ).fetchone() != (0,):
            assert time.monotonic() < deadline, "the terminated backends did not end"
            time.sleep(0.05)
    response = post_pair(api, pairId="after-restart")
    assert response.status_code == 200, response.content
    assert CompletionLog.objects.filter(pair_id="after-restart", succeeded=True).count() == 2
