"""The Celery application: Redis broker from settings, tasks discovered in the apps."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena_site.settings")

app = Celery("arena")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The worker's heartbeat for /healthz (core/heartbeat.py), and the prompt return of tasks
# lost with a killed worker (core/redelivery.py).
from core.heartbeat import WorkerHeartbeat  # noqa: E402
from core.redelivery import RestoreUnacked  # noqa: E402

app.steps["consumer"].add(WorkerHeartbeat)
app.steps["consumer"].add(RestoreUnacked)
