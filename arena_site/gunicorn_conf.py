"""gunicorn settings shared by the site and pairs pools: `gunicorn -c python:arena_site.gunicorn_conf`.

Only what every deployment needs; pool sizes, binds and worker classes stay on the command
line (docs/deployment.md). It does two things:

- Prometheus multiprocess mode: each worker writes its metrics under
  PROMETHEUS_MULTIPROC_DIR; when one exits its live gauges are dropped (counters stay,
  summed into /metrics). Without the variable a temporary directory is made for this pool
  alone, so /metrics still adds up this pool's workers.
- LOG_FORMAT=json: gunicorn's own error and access logs as JSON lines too, in the format
  of the site's (arena_site/log_format.py).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    # Before the app (and prometheus_client) is imported by --preload or the workers.
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="arena-metrics-")

wsgi_app = "arena_site.wsgi:application"
# gunicorn 25+ opens a control socket at one fixed path per user by default, which the web
# and pairs pools would share (each taking it from the other); nothing here uses it.
control_socket_disable = True
# Behind nginx on the same host: 127.0.0.1 only is trusted to set X-Forwarded-*.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
# Access lines on stderr with the rest (JSON under LOG_FORMAT=json), whatever the command line.
accesslog = "-"
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms "%(a)s"'

if os.environ.get("LOG_FORMAT") == "json":
    logconfig_dict = {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "arena_site.log_format.JsonFormatter"}},
        "handlers": {
            "console": {"class": "logging.StreamHandler", "formatter": "json"},
        },
        "loggers": {
            "gunicorn.error": {"handlers": ["console"], "level": "INFO", "propagate": False},
            "gunicorn.access": {"handlers": ["console"], "level": "INFO", "propagate": False},
        },
    }


def child_exit(_server: Any, worker: Any) -> None:  # gunicorn's Arbiter and Worker
    from prometheus_client import multiprocess

    from core.metrics import process_identifier_of

    # prometheus_client leaves mark_process_dead unannotated.
    multiprocess.mark_process_dead(process_identifier_of(worker.pid))  # type: ignore[no-untyped-call]
