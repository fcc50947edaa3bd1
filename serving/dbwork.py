"""Database work of the pair path, on a few dedicated threads per process.

A pair request holds its web thread for as long as the slower provider takes (a second or
more), so a server that answers 200 pairs at once runs 200+ threads. Django keeps one
PostgreSQL connection per thread that touched the database; if every pair thread did,
that would be hundreds of connections (PostgreSQL's default limit is 100), and opening a
fresh one per request costs ~4 ms here. So the pair path never touches the database from
its own thread: the few reads and writes it needs (serving state, completion logs) run on
``SERVING_DB_THREADS`` threads, which keep their connections.

``SERVING_DB_THREADS = 0`` runs the work inline (the embedded SQLite default, and the test
suite, whose test transactions are only visible to the thread that opened them).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from django.conf import settings
from django.db import close_old_connections, connections

T = TypeVar("T")

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_pid = 0


def _pool() -> ThreadPoolExecutor:
    global _executor, _pid
    with _lock:
        # A forked worker inherits the parent's executor object but not its threads.
        if _executor is None or _pid != os.getpid():
            _executor = ThreadPoolExecutor(
                max_workers=settings.SERVING_DB_THREADS, thread_name_prefix="serving-db"
            )
            _pid = os.getpid()
        return _executor


def _job(fn: Callable[..., T], args: tuple, kwargs: dict) -> T:
    # What Django does around a request: drop connections that broke or outlived
    # CONN_MAX_AGE, so a long-lived thread recovers from a database restart.
    close_old_connections()
    try:
        return fn(*args, **kwargs)
    finally:
        close_old_connections()


def run_db(fn: Callable[..., T], /, *args, **kwargs) -> T:
    """Run ``fn(*args, **kwargs)`` on a database thread and return its result (or raise)."""
    if settings.SERVING_DB_THREADS <= 0:
        return fn(*args, **kwargs)
    return _pool().submit(_job, fn, args, kwargs).result()


def shutdown() -> None:
    """Close every database thread's connections and stop the threads (tests, shutdown)."""
    global _executor
    with _lock:
        executor, _executor = _executor, None
    if executor is None or _pid != os.getpid():
        return
    workers = executor._max_workers
    # One job per thread: each waits at the barrier until all are running, so every thread
    # (the executor starts missing ones) closes its own connections.
    barrier = threading.Barrier(workers)

    def close() -> None:
        connections.close_all()
        barrier.wait(10)

    for future in [executor.submit(close) for _ in range(workers)]:
        future.result()
    executor.shutdown(wait=True)
