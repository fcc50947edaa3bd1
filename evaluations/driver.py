"""Executing a stored run: lanes that claim items, a heartbeat, and the one final summary.

`drive(run_id)` (the Celery task ``evaluations.tasks.run_evaluation``) works a run off in
``run.concurrency`` lanes (threads of this process; one lane runs in the calling thread).
Each lane repeatedly

1. checks the run is still ``running`` (a cancelled run stops between items);
2. **claims** the next item: ``pending``, or ``running`` under a lease that has expired (its
   driver died), locked with ``SELECT ... FOR UPDATE SKIP LOCKED`` so two lanes or two
   drivers never take the same one; the claim writes a token, a lease and one more attempt;
3. executes it (`suites.prepare`; the provider call waits for a slot of the provider's
   cross-worker semaphore);
4. **finishes** it by compare-and-set: the result is written only if the item is still
   ``running`` under this lane's token, and only then are the run's counters bumped. An item
   already ``done`` is never claimed again, so a resumed run never redoes one.

A heartbeat thread renews the run's ``heartbeat_at`` and the leases of the items in hand every
third of ``EVALUATION_LEASE_SECONDS``: leases stay short however long one item takes, and
a run whose heartbeat is older than a lease has lost its driver (`services.resume_stalled`
starts a new one). A driver starts only on a queued run or on a running one whose heartbeat
is stale (compare-and-set on the heartbeat), so a task message the broker delivers again
(acks are late) while the first driver is alive ends at once. An item claimed ``EVALUATION_MAX_ATTEMPTS`` times without finishing (it
keeps killing its worker) is recorded as ``interrupted`` instead of being tried again.

When no item is left, one driver (compare-and-set on the run's status) stores the summary,
marks the run ``done`` and publishes the suite's external board (`publish`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from .client import Meter, close_thread_client, meter, missing_key, reset_meter
from .models import EvaluationItem, EvaluationRun, ItemState, RunStatus, Suite
from .sandbox import isolation_report, refusal
from .suites import (
    ERROR,
    FAILED_OUTCOMES,
    INTERRUPTED,
    Outcome,
    Prepared,
    prepare,
    sandbox_of,
)
from .summaries import summarize

log = logging.getLogger(__name__)


def _lease() -> timedelta:
    return timedelta(seconds=float(settings.EVALUATION_LEASE_SECONDS))


def claimable(run_id: int, now: datetime | None = None) -> Q:
    now = now or timezone.now()
    return Q(run_id=run_id) & (
        Q(state=ItemState.PENDING) | Q(state=ItemState.RUNNING, lease_until__lt=now)
    )


def claim(run_id: int, token: str) -> EvaluationItem | None:
    """The next item of the run for this token, or None when nothing is claimable."""
    max_attempts = int(settings.EVALUATION_MAX_ATTEMPTS)
    while True:
        now = timezone.now()
        with transaction.atomic():
            item = (
                EvaluationItem.objects.select_for_update(skip_locked=True)
                .filter(claimable(run_id, now))
                .order_by("position")
                .first()
            )
            if item is None:
                return None
            if item.state == ItemState.RUNNING and item.attempts >= max_attempts:
                # It was taken this often and never finished: it probably kills its worker.
                item.state, item.outcome, item.passed = ItemState.DONE, INTERRUPTED, False
                item.error = f"not finished after {item.attempts} attempts (worker lost?)"
                item.finished_at, item.lease_until, item.claim = now, None, ""
                item.save()
                EvaluationRun.objects.filter(pk=run_id).update(
                    done=F("done") + 1, errors=F("errors") + 1
                )
                continue
            item.state, item.claim = ItemState.RUNNING, token
            item.lease_until = now + _lease()
            item.attempts += 1
            item.started_at = now
            item.save(update_fields=["state", "claim", "lease_until", "attempts", "started_at"])
            return item


def storable(value: Any) -> Any:
    """``value`` with what PostgreSQL refuses in text and JSON -- NUL characters and lone
    surrogates, which a model's answer (decoded from JSON) may hold -- replaced."""
    if isinstance(value, str):
        if "\x00" in value:
            value = value.replace("\x00", "\ufffd")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            value = value.encode("utf-8", "replace").decode("utf-8")
        return value
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable(v) for v in value]
    return value


def finish(item: EvaluationItem, token: str, outcome: Outcome, used: Meter) -> bool:
    """Store the result if the item is still this token's; bump the run's counters."""
    with transaction.atomic():
        stored = EvaluationItem.objects.filter(
            pk=item.pk, claim=token, state=ItemState.RUNNING
        ).update(
            state=ItemState.DONE,
            outcome=outcome.outcome,
            passed=outcome.passed,
            well_formatted=outcome.well_formatted,
            score=outcome.score,
            raw_output=storable(outcome.raw_output),
            extracted=storable(outcome.extracted),
            details=storable(outcome.details),
            latency_s=outcome.latency_s,
            duration_s=outcome.duration_s,
            error=storable(outcome.error[:2000]),
            lease_until=None,
            finished_at=timezone.now(),
        )
        if not stored:
            return False  # its lease expired and another driver took it over
        counters = {
            "done": F("done") + 1,
            "errors": F("errors") + int(outcome.outcome in FAILED_OUTCOMES),
            "calls": F("calls") + used.calls,
            "calls_with_usage": F("calls_with_usage") + used.with_usage,
            "prompt_tokens": F("prompt_tokens") + used.prompt_tokens,
            "completion_tokens": F("completion_tokens") + used.completion_tokens,
        }
        if used.cost is not None:
            counters["cost"] = Coalesce(F("cost"), 0.0) + used.cost
        EvaluationRun.objects.filter(pk=item.run_id).update(**counters)
    return True


def _status(run_id: int) -> str | None:
    return EvaluationRun.objects.filter(pk=run_id).values_list("status", flat=True).first()


def fail(run_id: int, error: str) -> None:
    EvaluationRun.objects.filter(
        pk=run_id, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]
    ).update(
        status=RunStatus.FAILED,
        error=error[:2000],
        finished_at=Coalesce(F("finished_at"), timezone.now()),
    )


def finalize(run_id: int) -> bool:
    """Summarise and mark done once every item is; True for the one driver that did."""
    with transaction.atomic():
        run = EvaluationRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None or run.status != RunStatus.RUNNING:
            return False
        if run.items.exclude(state=ItemState.DONE).exists():
            return False
        run.score, run.summary = summarize(run, run.items.all())
        run.status = RunStatus.DONE
        # A run finished before (failed items retried) keeps its finishing time.
        if run.finished_at is None:
            run.finished_at = timezone.now()
        else:
            run.rescored_at = timezone.now()
        run.save(update_fields=["score", "summary", "status", "finished_at", "rescored_at"])
    from .publish import publish_run

    try:
        publish_run(run)
    except Exception:  # the run is done either way; the admin can publish again
        log.exception("Could not publish the scores of evaluation run %s", run_id)
    return True


@dataclass
class _Driver:
    run_id: int
    prepared: Prepared
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    active: set[int] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def lane(self) -> None:
        while _status(self.run_id) == RunStatus.RUNNING:
            item = claim(self.run_id, self.token)
            if item is None:
                return
            with self.lock:
                self.active.add(item.pk)
            reset_meter()
            try:
                try:
                    outcome = self.prepared.execute(item.item_key)
                except Exception as exc:
                    log.exception("Evaluation item %s failed", item)
                    outcome = Outcome(ERROR, passed=False, error=type(exc).__name__)
                try:
                    finish(item, self.token, outcome, meter())
                except Exception as exc:
                    # The result could not be stored: record that instead (if that fails too,
                    # the lane ends and the item's lease runs out for another driver).
                    log.exception("Could not store evaluation item %s", item)
                    error = f"could not store the result: {type(exc).__name__}"
                    finish(item, self.token, Outcome(ERROR, passed=False, error=error), Meter())
            finally:
                with self.lock:
                    self.active.discard(item.pk)

    def thread_lane(self) -> None:
        try:
            self.lane()
        finally:
            close_thread_client()
            connection.close()

    def beat(self, stop: threading.Event) -> None:
        interval = float(settings.EVALUATION_LEASE_SECONDS) / 3.0
        try:
            while not stop.wait(interval):
                now = timezone.now()
                try:
                    EvaluationRun.objects.filter(pk=self.run_id).update(heartbeat_at=now)
                    with self.lock:
                        mine = list(self.active)
                    if mine:
                        EvaluationItem.objects.filter(
                            pk__in=mine, claim=self.token, state=ItemState.RUNNING
                        ).update(lease_until=now + _lease())
                except Exception:  # a database hiccup: the next beat tries again
                    log.exception("Heartbeat of evaluation run %s failed", self.run_id)
        finally:
            connection.close()

    def lanes(self, count: int) -> None:
        # The calling thread runs a lane itself, unless an event loop already runs in it (an
        # async caller, or Playwright's sync API in the test process): a lane drives a loop
        # of its own, which cannot run inside another, so then every lane gets a thread.
        here = not _loop_running_here()
        threads = [
            threading.Thread(target=self.thread_lane, name=f"evaluation-{self.run_id}-{i}")
            for i in range(count - 1 if here else count)
        ]
        for thread in threads:
            thread.start()
        try:
            if here:
                self.lane()
        finally:
            if here:
                close_thread_client()
            for thread in threads:
                thread.join()


def _loop_running_here() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _start(run_id: int) -> EvaluationRun | None:
    """Take the run (compare-and-set): a queued one, or a running one whose driver stopped
    beating; None when there is nothing to drive or a live driver has it."""
    now = timezone.now()
    taken = EvaluationRun.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING, started_at=Coalesce(F("started_at"), now), heartbeat_at=now
    )
    if not taken:
        # A redelivered message (acks are late) or a second resume finds the heartbeat fresh.
        taken = (
            EvaluationRun.objects.filter(pk=run_id, status=RunStatus.RUNNING)
            .filter(Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=now - _lease()))
            .update(heartbeat_at=now)
        )
    if not taken:
        return None
    run = EvaluationRun.objects.filter(pk=run_id).select_related("model").first()
    if run is None or run.status != RunStatus.RUNNING:
        return None
    for stored in (run.provider_settings, run.judge_settings, run.baseline_settings):
        name = missing_key(stored) if stored else None
        if name:
            fail(run_id, f"the API key variable {name} is not set in this worker")
            return None
    if run.suite != Suite.CODEARENA:
        report = isolation_report(sandbox_of(run.sandbox)[1])
        if not report.available:
            # Untrusted programs never run unconfined unless the operator opted out.
            fail(run_id, f"cannot start: {refusal(report.why)}")
            return None
        if "resolved" not in run.sandbox:
            run.sandbox = {
                **run.sandbox,
                "resolved": {"mode": report.mode, "limitations": list(report.limitations)},
            }
            EvaluationRun.objects.filter(pk=run_id).update(sandbox=run.sandbox)
    return run


def drive(run_id: int) -> str | None:
    """Work the run off (see the module docstring); returns its status afterwards."""
    run = _start(run_id)
    if run is None:
        return _status(run_id)
    try:
        prepared = prepare(run)
    except Exception as exc:
        log.exception("Evaluation run %s cannot start", run_id)
        fail(run_id, f"cannot start: {type(exc).__name__}: {exc}")
        return _status(run_id)
    driver = _Driver(run_id, prepared)
    # SQLite (the embedded setup) serialises writers: one lane there.
    count = 1 if connection.vendor == "sqlite" else max(1, run.concurrency)
    stop = threading.Event()
    beat = threading.Thread(target=driver.beat, args=(stop,), name=f"evaluation-{run_id}-beat")
    beat.start()
    poll = min(1.0, float(settings.EVALUATION_LEASE_SECONDS) / 3.0)
    try:
        while _status(run_id) == RunStatus.RUNNING:
            driver.lanes(count)
            # Wait for items other drivers hold until they finish or their lease expires.
            while _status(run_id) == RunStatus.RUNNING:
                if (
                    not EvaluationItem.objects.filter(run_id=run_id)
                    .exclude(state=ItemState.DONE)
                    .exists()
                ):
                    finalize(run_id)
                    break
                if EvaluationItem.objects.filter(claimable(run_id)).exists():
                    break
                time.sleep(poll)  # production polling of other workers' items
    finally:
        stop.set()
        beat.join()
    return _status(run_id)
