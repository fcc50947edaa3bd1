"""The pair path's database work runs on the few database threads, not the request thread."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from ingest.models import CompletionLog, Privacy
from serving import dbwork, services
from serving.selectors import clear_serving_state
from tests.serving.conftest import SERVED, add_provider


@pytest.mark.django_db(transaction=True)
def test_request_thread_opens_no_database_connection(stub, secret_env, settings):
    for key, (kind, remote) in SERVED.items():
        add_provider(key, kind, remote, stub)
    settings.SERVING_DB_THREADS = 2
    clear_serving_state()
    seen: dict = {}

    def request_thread() -> None:
        try:
            seen["pair"] = services.create_pair(
                request=services.PairRequest(
                    pair_id="p-db", user_id="u", prefix="x = ", suffix="", privacy=Privacy.PRIVATE
                )
            )
            seen["connected"] = connection.connection is not None
        finally:
            connection.close()

    try:
        thread = threading.Thread(target=request_thread)
        thread.start()
        thread.join(30)
        assert seen["connected"] is False
        assert len(seen["pair"]["completionItems"]) == 2
        dbwork.drain()  # the logs are written after the answer
        # Two served sides (on a busy machine a slow side may also leave a timed-out call).
        assert CompletionLog.objects.filter(pair_id="p-db", succeeded=True).count() == 2
        # Work ran on the named database threads.
        names = dbwork.run_db(lambda: threading.current_thread().name)
        assert names.startswith("serving-db")
    finally:
        dbwork.shutdown()
        clear_serving_state()


def test_backlogged_writes_are_dropped_not_waited_for(settings, monkeypatch, caplog):
    settings.SERVING_DB_THREADS = 1
    monkeypatch.setattr(dbwork, "_slots", threading.BoundedSemaphore(1))
    monkeypatch.setattr(dbwork, "_BACKLOG_WAIT", 0.05)
    dbwork._slots.acquire()  # the queue is full
    ran = []
    dbwork.submit_db(ran.append, 1)  # returns: the caller was not made to wait for a slot
    assert ran == [] and "backlogged" in caplog.text
