"""Lanes in parallel, within each provider's limit across runs; the Redis semaphore itself.

These tests commit (``transactional_db``): the driver's lanes are threads with their own
database connections.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from evaluations import driver, services
from evaluations.models import RunStatus, Suite
from evaluations.semaphore import SemaphoreTimeout, holders, slot
from tests.evaluations.conftest import add_model
from tests.evaluations.scripts import humaneval_answers


@pytest.fixture
def slow_model(transactional_db, stub, eval_settings):
    stub.behave("slow", latency=0.3, answers=humaneval_answers({i: None for i in range(10)}))
    return add_model("slow", stub)


def test_lanes_run_in_parallel_but_never_beyond_the_providers_limit(slow_model, stub, settings):
    settings.EVALUATION_PROVIDER_CONCURRENCY = 2
    run = services.create_run(suite=Suite.HUMANEVAL, model=slow_model, limit=8, concurrency=6)
    assert run.provider_settings["max_concurrency"] == 2
    assert driver.drive(run.pk) == RunStatus.DONE
    run.refresh_from_db()
    assert stub.peak_in_flight == 2  # six lanes, two slots
    assert run.done == 8 and run.score == 100.0 and stub.calls["slow"] == 8
    assert holders(f"provider:{run.provider_id}") == 0


def test_two_runs_on_one_provider_share_its_limit(slow_model, stub, settings):
    settings.EVALUATION_PROVIDER_CONCURRENCY = 3
    runs = [
        services.create_run(suite=Suite.HUMANEVAL, model=slow_model, limit=5, concurrency=3)
        for _ in range(2)
    ]

    def drive(run_id: int) -> None:
        try:
            driver.drive(run_id)
        finally:
            connection.close()

    threads = [threading.Thread(target=drive, args=(r.pk,)) for r in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for run in runs:
        run.refresh_from_db()
        assert (run.status, run.done, run.score) == (RunStatus.DONE, 5, 100.0)
    assert stub.peak_in_flight == 3


def test_the_providers_own_concurrency_caps_the_setting(transactional_db, stub, settings):
    settings.EVALUATION_PROVIDER_CONCURRENCY = 8
    model = add_model("narrow", stub, max_concurrency=1)
    run = services.create_run(suite=Suite.HUMANEVAL, model=model, limit=2, concurrency=4)
    assert run.provider_settings["max_concurrency"] == 1


def test_semaphore_counts_holders_and_frees_a_dead_holders_slot(db):
    name = "test-semaphore"
    with slot(name, limit=2, lease_s=30), slot(name, limit=2, lease_s=30):
        assert holders(name) == 2
        with pytest.raises(SemaphoreTimeout), slot(name, limit=2, lease_s=30, max_wait_s=0.2):
            pass
    assert holders(name) == 0
    # A holder that never releases (its worker was killed) is counted out after its lease.
    dead = slot(name, limit=1, lease_s=0.5)
    dead.__enter__()
    assert holders(name) == 1
    with slot(name, limit=1, lease_s=30, max_wait_s=30):
        assert holders(name) == 1
    assert holders(name) == 0


def test_semaphore_wait_stops_when_asked(db):
    name = "test-semaphore-stop"
    with (
        slot(name, limit=1, lease_s=30),
        pytest.raises(SemaphoreTimeout),
        slot(name, limit=1, lease_s=30, should_stop=lambda: True),
    ):
        pass


def test_a_caller_inside_an_event_loop_still_drives_the_run(
    slow_model, stub, settings, monkeypatch
):
    # Found by the whole suite: Playwright's sync API leaves a running loop in the main
    # thread (tests/browser allows Django's ORM there), and a lane there could not run a
    # loop of its own: every call failed.
    import asyncio

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.EVALUATION_PROVIDER_CONCURRENCY = 2
    run = services.create_run(suite=Suite.HUMANEVAL, model=slow_model, limit=3, concurrency=1)

    async def inside_a_loop() -> str:
        return driver.drive(run.pk)

    # In a thread of its own, so asyncio.run works whatever loop this test's thread runs.
    result: list[str] = []

    def caller() -> None:
        try:
            result.append(asyncio.run(inside_a_loop()))
        finally:
            connection.close()

    thread = threading.Thread(target=caller)
    thread.start()
    thread.join()
    assert result == [RunStatus.DONE]
    run.refresh_from_db()
    assert run.done == 3 and run.score == 100.0
