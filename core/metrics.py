"""The process's Prometheus metrics: one place that names them, so every app counts the same way.

Apps only increment or observe these; the `/metrics` view (and, under gunicorn, the
multiprocess collector) lives with the deployment code (`arena_site/metrics.py`). Labels are
small fixed sets (route names, reasons, model keys): never user ids, code or free text.

With PROMETHEUS_MULTIPROC_DIR set, every process writes its values to files there and
`/metrics` adds them up: the web and pairs pools and the Celery worker share one directory.
The files are named by host name and pid, not pid alone, so containers (each with its own
pid 1) can share the directory too.
"""

from __future__ import annotations

import os
import socket

from prometheus_client import Counter, Histogram, values

_HOST = socket.gethostname()


def process_identifier_of(pid: int) -> str:
    return f"{_HOST}_{pid}"


def process_identifier() -> str:
    return process_identifier_of(os.getpid())


if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.makedirs(os.environ["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)
    # Before any metric exists: each takes its value class when it is created.
    # prometheus_client leaves MultiProcessValue unannotated.
    values.ValueClass = values.MultiProcessValue(  # type: ignore[no-untyped-call]
        process_identifier=process_identifier
    )

VOTES = Counter(
    "arena_votes_total",
    "Votes received, by route and result (stored, duplicate, rejected reason).",
    ["route", "result"],
)
LABELLER_FAILURES = Counter(
    "arena_labeller_failures_total",
    "Labeller exceptions caught at ingest; the vote was stored with that label unknown.",
    ["labeller"],
)
PAIRS = Counter("arena_pairs_total", "Pair requests by kind and result.", ["kind", "result"])
PROVIDER_LATENCY = Histogram(
    "arena_provider_latency_seconds",
    "Provider call latency per model, successful calls only.",
    ["model"],
    buckets=(0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 15.0),
)
RECOMPUTE_SECONDS = Histogram(
    "arena_recompute_seconds",
    "Duration of a leaderboard recompute, by outcome.",
    ["outcome"],
    buckets=(0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300),
)
NUL_STRIPPED = Counter(
    "arena_nul_stripped_total", "Code fields from which NUL characters were stripped."
)
SURROGATES_REPLACED = Counter(
    "arena_surrogates_replaced_total",
    "Code fields in which lone UTF-16 surrogates were replaced by U+FFFD.",
)
CACHE_FOREIGN_VALUES = Counter(
    "arena_cache_foreign_values_total",
    "Cache entries read as a miss because this site did not write them (e.g. a pickle).",
)
