"""The process's Prometheus metrics: one place that names them, so every app counts the same way.

Apps only increment or observe these; the `/metrics` view (and, under gunicorn, the
multiprocess collector) lives with the deployment code. Labels are small fixed sets (route
names, reasons, model keys): never user ids, code or free text.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

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
