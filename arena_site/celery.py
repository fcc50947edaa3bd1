"""The Celery application: Redis broker from settings, tasks discovered in the apps.

With `LOG_FORMAT=json` the worker and beat write JSON lines only: started with `--quiet`
(no banner, docs/deployment.md), Python warnings go through logging, and the few lines
Celery's worker prints itself (`safe_say`: "worker: Warm shutdown", ...) are logged instead.
"""

import logging
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena_site.settings")

if os.environ.get("LOG_FORMAT") == "json":
    import celery.apps.worker as _celery_worker

    logging.captureWarnings(True)
    _said = logging.getLogger("celery.apps.worker")

    def _say(msg: str, *_stream: object) -> None:
        _said.warning("%s", msg.strip())

    _celery_worker.safe_say = _say  # type: ignore[attr-defined]  # celery-types lacks it

app = Celery("arena")
app.config_from_object("django.conf:settings", namespace="CELERY")


def _redbeat_settings() -> dict[str, object]:
    """settings.py's CELERY_REDBEAT_* under their plain names too: celery-redbeat tells
    whether a setting was given by its plain name alone, and without it falls back to the
    broker's options (and warns)."""
    from django.conf import settings

    return {
        name.removeprefix("CELERY_").lower(): getattr(settings, name)
        for name in dir(settings)
        if name.startswith("CELERY_REDBEAT_")
    }


app.add_defaults(_redbeat_settings)
app.autodiscover_tasks()

# The worker's heartbeat for /healthz (core/heartbeat.py), and the prompt return of tasks
# lost with a killed worker (core/redelivery.py).
from core.heartbeat import WorkerHeartbeat  # noqa: E402
from core.redelivery import RestoreUnacked  # noqa: E402

app.steps["consumer"].add(WorkerHeartbeat)
app.steps["consumer"].add(RestoreUnacked)
