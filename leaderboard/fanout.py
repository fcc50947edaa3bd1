"""Slice fits shared among Celery workers: the recompute's own worker and any idle ones.

The recompute (holding the recompute lease) puts each category slice's fit -- its grouped
counts and the fit settings, a few kilobytes -- into Redis under its run, enqueues one
`leaderboard.tasks.fit_slice` task per slice, fits the overall board itself, then works
through whatever slices nobody has taken. Each slice goes to whoever claims it first
(`SET NX` with a lease of `RECOMPUTE_SLICE_CLAIM_SECONDS`), and its board comes back
through Redis; the recompute publishes once every slice is in, in one transaction as
before. So with one worker the recompute fits every slice in turn, as it always did (the
queued tasks find nothing left to do), and with N workers on N machines the fits spread.

A slice whose fit raised fails the run, and the previous board stays published. A claim
whose worker died (no result when its lease runs out) is fitted by the recompute itself.
Without Redis (the embedded mode) or with `RECOMPUTE_FAN_OUT` off, everything is fitted
in-process. Specs and results travel as JSON (core/jsoncodec.py), never pickle: a value
written into Redis by anyone else cannot make a worker run code.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from celery import current_app
from django.conf import settings

from analysis.grouping import GroupedCounts
from analysis.leaderboard import Leaderboard
from core import jsoncodec
from core.redis_client import key_prefix, shared_redis

from .fitting import FitSettings, fit_board

log = logging.getLogger(__name__)
TASK = "leaderboard.tasks.fit_slice"
_KEEP_SECONDS = 3600  # specs and results outlive any run


@dataclass(frozen=True)
class SliceJob:
    key: str
    counts: GroupedCounts
    rounds: int


@dataclass(frozen=True)
class _Spec:
    job: SliceJob
    settings: FitSettings


@dataclass(frozen=True)
class _Result:
    board: Leaderboard | None
    error: str
    fitted_by: str


def enabled() -> bool:
    return bool(
        settings.RECOMPUTE_FAN_OUT and settings.REDIS_URL and not settings.CELERY_TASK_ALWAYS_EAGER
    )


def _key(run: str, kind: str, slice_key: str) -> str:
    return f"{key_prefix()}:fanout:{run}:{kind}:{slice_key}"


def _me() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def _fit_claimed(run: str, slice_key: str) -> bool:
    """Fit `slice_key` of `run` if this process gets the claim; whether it did."""
    client = shared_redis()
    assert client is not None
    claimed = client.set(
        _key(run, "claim", slice_key), _me(), nx=True, ex=settings.RECOMPUTE_SLICE_CLAIM_SECONDS
    )
    if not claimed:
        return False
    raw = cast(bytes | None, client.get(_key(run, "spec", slice_key)))
    if raw is None:  # the run is over (or its specs expired): nothing to do
        return False
    spec: _Spec = jsoncodec.loads(raw)
    try:
        board, error = (
            fit_board(spec.job.counts, settings=spec.settings, rounds=spec.job.rounds),
            "",
        )
    except Exception as exc:
        log.exception("Fit of slice %s failed", slice_key)
        board, error = None, f"{type(exc).__name__}: {exc}"[:500]
    client.set(
        _key(run, "result", slice_key),
        jsoncodec.dumps(_Result(board, error, _me())),
        ex=_KEEP_SECONDS,
    )
    return True


def fit_slice_task(run: str, slice_key: str) -> bool:
    """The body of the `fit_slice` task: help a running recompute with one slice."""
    return _fit_claimed(run, slice_key)


def _results(run: str, keys: list[str]) -> dict[str, _Result]:
    client = shared_redis()
    assert client is not None
    raw = cast(list[bytes | None], client.mget([_key(run, "result", k) for k in keys]))
    return {k: jsoncodec.loads(r) for k, r in zip(keys, raw, strict=True) if r is not None}


def fit_shared(
    jobs: list[SliceJob],
    *,
    fit_settings: FitSettings,
    meanwhile: Callable[[], None] = lambda: None,
) -> tuple[dict[str, Leaderboard], dict[str, str]]:
    """Fit every job's board, sharing the work with idle workers; runs `meanwhile` (the
    overall board's fit) after handing the slices out. Returns (boards, who fitted each).
    Raises RuntimeError naming the slice when a fit failed."""
    if not enabled() or not jobs:
        meanwhile()
        boards = {j.key: fit_board(j.counts, settings=fit_settings, rounds=j.rounds) for j in jobs}
        return boards, {k: "recompute" for k in boards}
    client = shared_redis()
    assert client is not None
    run = uuid.uuid4().hex
    pipe = client.pipeline(transaction=False)
    for job in jobs:
        pipe.set(
            _key(run, "spec", job.key), jsoncodec.dumps(_Spec(job, fit_settings)), ex=_KEEP_SECONDS
        )
    pipe.execute()
    for job in jobs:
        current_app.send_task(TASK, args=[run, job.key])
    meanwhile()
    keys = [j.key for j in jobs]
    done: dict[str, _Result] = {}
    stop = threading.Event()
    # A slice is fitted here once any claim on it lapses, so waiting longer than a few
    # claims' length with no new result means the results are not coming (Redis lost them).
    patience = 3 * settings.RECOMPUTE_SLICE_CLAIM_SECONDS
    last_progress, seen = time.monotonic(), 0
    while len(done) < len(keys):
        for key in keys:
            if key not in done:
                _fit_claimed(run, key)  # False: someone else has it, or has done it
        done = _results(run, keys)
        failed = {k: r.error for k, r in done.items() if r.error}
        if failed:
            key, error = next(iter(failed.items()))
            raise RuntimeError(f"fit of slice {key} failed: {error}")
        if len(done) > seen:
            last_progress, seen = time.monotonic(), len(done)
        elif time.monotonic() - last_progress > patience:
            missing = sorted(set(keys) - set(done))
            raise RuntimeError(f"slices not fitted after {patience} s: {', '.join(missing)}")
        if len(done) < len(keys):
            # Others are fitting the rest: look again shortly (a dead helper's claim
            # expires and the loop above fits its slice here).
            stop.wait(0.1)
    client.delete(*[_key(run, kind, k) for k in keys for kind in ("spec", "result")])
    boards = {k: r.board for k, r in done.items() if r.board is not None}
    return boards, {k: r.fitted_by for k, r in done.items()}
