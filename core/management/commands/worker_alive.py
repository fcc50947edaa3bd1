"""manage.py worker_alive: exit 0 if a Celery worker's heartbeat is fresh (a container healthcheck).

With `--hostname` it checks that one worker (`celery@<hostname>`, the default name in a
container); without, any worker. Stale means older than WORKER_HEARTBEAT_STALE_SECONDS,
the same rule `/healthz` uses (core/heartbeat.py).
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.heartbeat import newest_beat_age
from core.redis_client import key_prefix, shared_redis


class Command(BaseCommand):
    help = "Exit 0 if a Celery worker wrote its heartbeat recently (docker-compose healthcheck)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--hostname", help="the worker's host name (celery@<hostname>)")

    def handle(self, *args: Any, **options: Any) -> None:
        stale = settings.WORKER_HEARTBEAT_STALE_SECONDS
        if options["hostname"]:
            client = shared_redis()
            value: bytes | None = (
                client.get(f"{key_prefix()}:worker-beat:celery@{options['hostname']}")  # type: ignore[assignment]
                if client
                else None
            )
            age = None if value is None else time.time() - float(value)
        else:
            age = newest_beat_age()
        if age is None or age > stale:
            raise CommandError(f"no worker heartbeat within {stale:g} s (last: {age})")
        self.stdout.write(f"worker heartbeat {age:.1f} s ago")
