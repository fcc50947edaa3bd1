"""Runs on a real Celery worker: resumed after the worker is killed, hostile answers contained.

The stub provider runs in this process; the worker (a separate ``celery worker`` process on
the test database and a private queue) reaches it over loopback. Leases are 3 s here
(``EVALUATION_LEASE_SECONDS`` in the worker's environment), so a new worker resumes a
killed one's run about four seconds after it starts. Every wait polls with a generous
deadline.
"""

from __future__ import annotations

import os
import socket
import uuid

import pytest

from evaluations import services
from evaluations.models import EvaluationRun, ItemState, RunStatus, Suite
from tests.celery_worker import running_worker, wait_for
from tests.evaluations.conftest import add_model
from tests.evaluations.scripts import humaneval_answers

pytestmark = pytest.mark.integration

WORKER_ENV = {
    "EVALUATION_LEASE_SECONDS": "3",
    "EVALUATION_SANDBOX_CPU_SECONDS": "3",
    "EVALUATION_SANDBOX_WALL_SECONDS": "8",
}


@pytest.fixture
def worker(transactional_db, settings, monkeypatch, eval_settings):
    """Starts workers (a context manager) with the evaluations' test environment."""
    for name, value in WORKER_ENV.items():
        monkeypatch.setenv(name, value)

    def start():
        return running_worker(redis_url=settings.REDIS_URL, monkeypatch=monkeypatch)

    return start


def status(run_id: int) -> EvaluationRun:
    return EvaluationRun.objects.get(pk=run_id)


def test_a_run_survives_its_worker_being_killed_and_done_items_are_not_redone(worker, stub):
    n = 16
    stub.behave("coder", latency=0.5, answers=humaneval_answers({i: None for i in range(n)}))
    model = add_model("coder", stub)
    run = services.create_run(suite=Suite.HUMANEVAL, model=model, limit=n, concurrency=2)
    with worker() as first:
        services.start_run(run)
        wait_for(lambda: status(run.pk).done >= 4, timeout=120)
        first.kill()
        first.wait(timeout=30)
    killed = status(run.pk)
    assert killed.status == RunStatus.RUNNING and killed.done < n
    done_before = {
        i.item_key: (i.finished_at, i.raw_output) for i in killed.items.filter(state=ItemState.DONE)
    }
    calls_before = stub.calls["coder"]
    with worker() as second:
        wait_for(lambda: status(run.pk).status == RunStatus.DONE, timeout=180)
        assert second.poll() is None
    finished = status(run.pk)
    assert (finished.done, finished.score) == (n, 100.0)
    # The items finished before the kill were kept as they were, not asked again.
    for item in finished.items.filter(item_key__in=done_before):
        assert (item.finished_at, item.raw_output) == done_before[item.item_key]
        assert item.attempts == 1
    # Only the items in hand at the kill (at most one per lane) were claimed twice; each of
    # them was asked at most twice (once if the kill came before its request went out).
    redone = finished.items.filter(attempts=2).count()
    assert redone <= 2
    assert n <= stub.calls["coder"] <= n + redone
    # The new worker asked for exactly the items not done before the kill, once each.
    assert stub.calls["coder"] - calls_before == n - len(done_before)
    assert set(finished.items.values_list("attempts", flat=True)) <= {1, 2}


def test_hostile_answers_are_stopped_and_recorded_while_the_worker_survives(worker, stub, tmp_path):
    outside = tmp_path / f"escaped-{uuid.uuid4().hex[:6]}.txt"
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        port = server.getsockname()[1]
        bodies = {
            0: "    while True:\n        pass\n",
            1: (  # a fork bomb that keeps going when fork() is refused
                "    import os\n    while True:\n        try:\n            os.fork()\n"
                "        except OSError:\n            pass\n"
            ),
            2: "    block = bytearray(10 * 1024**3)\n    return block\n",
            3: f"    open({str(outside)!r}, 'w').write('gotcha')\n",
            4: f"    import socket\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n",
            5: None,  # the canonical solution: the worker still works afterwards
        }
        stub.behave("hostile", answers=humaneval_answers(bodies))
        model = add_model("hostile", stub)
        run = services.create_run(suite=Suite.HUMANEVAL, model=model, limit=6, concurrency=2)
        with worker() as proc:
            services.start_run(run)
            wait_for(lambda: status(run.pk).status == RunStatus.DONE, timeout=240)
            assert proc.poll() is None  # the worker survived all of it
        finished = status(run.pk)
        outcomes = dict(finished.items.values_list("position", "outcome"))
        assert outcomes == {
            0: "timeout",
            1: "timeout",
            2: "memory",
            3: "failed",
            4: "failed",
            5: "passed",
        }
        assert not outside.exists()
        assert finished.sandbox["resolved"] == {"mode": "bwrap", "limitations": []}
        network = finished.items.get(position=4)
        # The sandbox's own network namespace: its loopback has no listener.
        assert "ConnectionRefusedError" in network.details["stderr_tail"]
        with pytest.raises(BlockingIOError):
            server.accept()  # no connection ever reached the listening socket
    assert finished.score == pytest.approx(100 / 6, abs=1e-3)
    assert os.path.exists(tmp_path)
