"""No pickle anywhere: what the site reads from Redis or disk is JSON, so writing there runs no code.

The site's code never imports pickle, shelve or marshal; Celery accepts JSON only, so a
pickled task message pushed into the queue is refused by a real worker; a pickle put where
the slice fan-out keeps its specs is refused too; beat keeps its state as JSON (celery-redbeat,
in Redis). The cache's side is tests/core/test_cache_serializer.py.
"""

from __future__ import annotations

import ast
import json
import pickle
import uuid
from pathlib import Path

import pytest
from kombu import Connection

from arena_site.celery import app
from core.redis_client import shared_redis
from leaderboard import fanout
from tests.celery_worker import wait_for

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = [
    "analysis", "arena_site", "catalogue", "contributors", "core", "evaluations", "external",
    "ingest", "leaderboard", "moderation", "serving",
]  # fmt: skip
FORBIDDEN = {"pickle", "cPickle", "_pickle", "shelve", "marshal", "dill", "cloudpickle"}


class _Canary:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_no_module_of_the_site_imports_a_pickle_module():
    found = []
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                found += [
                    f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in FORBIDDEN
                ]
    assert not found


def test_celery_speaks_json_only():
    conf = app.conf
    assert conf.task_serializer == "json" and conf.result_serializer == "json"
    assert set(conf.accept_content) == {"json"} and set(conf.result_accept_content) == {"json"}
    assert conf.beat_scheduler == "redbeat.RedBeatScheduler"


@pytest.mark.integration
def test_a_pickled_task_message_is_refused_by_the_worker(celery_worker, tmp_path, settings):
    canary = tmp_path / "pickle-was-run"
    queue = app.conf.task_default_queue
    # A task's (args, kwargs, embed) whose unpickling would write the canary.
    body = pickle.dumps((_Canary(str(canary)), {}, {}))
    task_id = str(uuid.uuid4())
    with Connection(settings.REDIS_URL) as conn:
        producer = conn.Producer(serializer="pickle")
        producer.publish(
            body,
            routing_key=queue,
            exchange="",
            content_type="application/x-python-serialize",
            content_encoding="binary",
            headers={"task": "leaderboard.tasks.reconcile_counts", "id": task_id, "lang": "py"},
            declare=[],
        )
    log = Path(celery_worker.log_path)
    wait_for(lambda: "Refusing to deserialize untrusted content" in log.read_text(), timeout=60)
    assert not canary.exists()


@pytest.mark.django_db
def test_a_pickle_in_the_fan_outs_spec_is_refused_not_run(settings, tmp_path):
    if not settings.REDIS_URL:
        pytest.skip("the fan-out lives in Redis")
    canary = tmp_path / "pickle-was-run"
    run = uuid.uuid4().hex
    client = shared_redis()
    client.set(
        fanout._key(run, "spec", "language:python"), pickle.dumps(_Canary(str(canary))), ex=60
    )
    with pytest.raises(ValueError):
        fanout.fit_slice_task(run, "language:python")
    assert not canary.exists()
    client.delete(
        fanout._key(run, "spec", "language:python"), fanout._key(run, "claim", "language:python")
    )


def test_beat_keeps_its_state_as_json(settings):
    if not settings.REDIS_URL:
        pytest.skip("beat's state lives in Redis")
    from redbeat.schedulers import RedBeatSchedulerEntry, ensure_conf, get_redis

    ensure_conf(app)
    key = RedBeatSchedulerEntry.generate_key(app, f"test-json-{uuid.uuid4().hex[:8]}")
    entry = RedBeatSchedulerEntry(
        name=key.rsplit(":", 1)[1], task="leaderboard.tasks.recompute_leaderboard",
        schedule=60.0, kwargs={"trigger": "beat"}, app=app,
    )  # fmt: skip
    entry.save()
    client = get_redis(app)
    try:
        stored = client.hgetall(entry.key)
        assert json.loads(stored["definition"])["task"] == "leaderboard.tasks.recompute_leaderboard"
        assert "last_run_at" in json.loads(stored["meta"])
        client.hset(entry.key, "meta", pickle.dumps(_Canary("/nonexistent/canary")))
        with pytest.raises(ValueError):  # not JSON: refused, never unpickled
            RedBeatSchedulerEntry.from_key(entry.key, app=app)
    finally:
        entry.delete()
