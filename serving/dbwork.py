"""Database work of the pair path, on a few dedicated threads per process.

A pair request holds its web thread for as long as the slower provider takes (a second or
more), so a server that answers 200 pairs at once runs 200+ threads. Django keeps one
PostgreSQL connection per thread that touched the database; if every pair thread did,
that would be hundreds of connections (PostgreSQL's default limit is 100), and opening a
fresh one per request costs ~4 ms here. So the pair path never touches the database from
its own thread: the few reads and writes it needs (serving state, completion logs) run on
``SERVING_DB_THREADS`` threads, which keep their connections.

`run_db` waits for the result (reads). `submit_db` does not (the completion logs: the
answer does not depend on them, so they are written after it is sent); at most
``_MAX_PENDING`` such writes wait per process, beyond that the caller waits up to a second
for a free place and then drops the write (no unbounded queue, no hung web thread).
`drain` waits for them (tests).

``SERVING_DB_THREADS = 0`` runs the work inline (the embedded SQLite default, and the test
suite, whose test transactions are only visible to the thread that opened them).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TypeVar

from django.conf import settings
from django.db import DatabaseError, connections

T = TypeVar("T")

log = logging.getLogger(__name__)
_MAX_PENDING = 2000
# Seconds a web thread waits for a free place before dropping a write.
_BACKLOG_WAIT = 1.0

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
    try:
        return fn(*args, **kwargs)
    except DatabaseError:
        # A broken connection (database restarted, network) stays broken in a long-lived
        # thread: drop it, the next job connects afresh. (Django's per-request connection
        # checks do not run on these threads; checking before every job would cost a round
        # trip each time.)
        connections.close_all()
        raise


def run_db(fn: Callable[..., T], /, *args, **kwargs) -> T:
    """Run ``fn(*args, **kwargs)`` on a database thread and return its result (or raise)."""
    if settings.SERVING_DB_THREADS <= 0:
        return fn(*args, **kwargs)
    return _pool().submit(_job, fn, args, kwargs).result()


_slots = threading.BoundedSemaphore(_MAX_PENDING)
_pending: set[Future] = set()


def _done(future: Future) -> None:
    _slots.release()
    with _lock:
        _pending.discard(future)
    exc = future.exception()
    if exc is not None:
        # The class only: database errors can quote the values they refused.
        log.error("serving: background database write failed: %s", type(exc).__name__)


def submit_db(fn: Callable[..., object], /, *args, **kwargs) -> None:
    """Run ``fn`` on a database thread without waiting for it (inline when threads = 0)."""
    if settings.SERVING_DB_THREADS <= 0:
        fn(*args, **kwargs)
        return
    if not _slots.acquire(timeout=_BACKLOG_WAIT):
        # The database is not keeping up (or is down): drop this write rather than hold
        # a web thread; latency statistics survive a gap.
        log.warning("serving: database writes backlogged; a completion log was dropped")
        return
    future = _pool().submit(_job, fn, args, kwargs)
    with _lock:
        _pending.add(future)
    future.add_done_callback(_done)


def drain(timeout: float = 30.0) -> None:
    """Wait until every write submitted so far is done."""
    with _lock:
        waiting = list(_pending)
    wait(waiting, timeout=timeout)


def shutdown() -> None:
    """Close every database thread's connections and stop the threads (tests, shutdown)."""
    global _executor
    drain()
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
