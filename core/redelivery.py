"""Tasks lost with a killed worker go back to the queue within `CELERY_VISIBILITY_TIMEOUT`.

With the Redis broker a worker takes a message and keeps it in Redis's "unacknowledged"
set until the task is done (`CELERY_TASK_ACKS_LATE`). A worker killed mid-task never
acknowledges it; kombu puts such a message back once it is older than the visibility
timeout, but a live worker only looks on every tenth pass of a ten-second timer, so a lost
recompute waited the timeout plus up to 100 s (and the timeout was kombu's hour when unset).
This consumer step (registered in `arena_site/celery.py`) makes each worker look every
`REDELIVERY_CHECK_SECONDS`: a message taken by a dead worker is handed out again within the
timeout plus one check. kombu's own Redis lock keeps two workers from restoring the same
message. With another broker (none is used here) the step does nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import bootsteps
from django.conf import settings

from .redis_client import REDIS_ERRORS

log = logging.getLogger(__name__)


class RestoreUnacked(bootsteps.StartStopStep):
    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.tref: Any = None

    def start(self, parent: Any) -> None:
        consumer = getattr(parent, "task_consumer", None)
        qos = getattr(getattr(consumer, "channel", None), "qos", None)
        restore_visible = getattr(qos, "restore_visible", None)
        if restore_visible is None:
            return

        def restore() -> None:
            try:
                # interval=1: every call looks (kombu's own timer looks on every tenth).
                restore_visible(num=None, interval=1)
            except REDIS_ERRORS as exc:
                log.warning("Unacknowledged tasks not checked: %s", type(exc).__name__)

        self.tref = parent.timer.call_repeatedly(settings.REDELIVERY_CHECK_SECONDS, restore)

    def stop(self, parent: Any) -> None:
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None
