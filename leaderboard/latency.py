"""Served latency per model for the board: median and 90th percentile of recent completions.

From the completion logs (served by this server, or reported by the extension's
`/add_completion`) that succeeded and carry a latency, over the last
`ARENA_LATENCY_WINDOW_DAYS`; a model with fewer than `ARENA_LATENCY_MIN_SAMPLES` gets none.
Percentiles interpolate linearly between order statistics (PostgreSQL's `percentile_cont`,
numpy's default), so both backends give the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import numpy as np
from django.conf import settings
from django.db import connection
from django.utils import timezone

from ingest.models import CompletionLog


@dataclass(frozen=True)
class Latency:
    p50_ms: float
    p90_ms: float
    samples: int


_PERCENTILES_SQL = """
SELECT model_id,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms),
       percentile_cont(0.9) WITHIN GROUP (ORDER BY latency_ms),
       count(*)
FROM {table}
WHERE succeeded AND latency_ms IS NOT NULL AND received_at >= %s
GROUP BY model_id
"""


def served_latency() -> dict[int, Latency]:
    """Model id -> its recent served latency (only models with enough samples)."""
    since = timezone.now() - timedelta(days=float(settings.ARENA_LATENCY_WINDOW_DAYS))
    minimum = int(settings.ARENA_LATENCY_MIN_SAMPLES)
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute(_PERCENTILES_SQL.format(table=CompletionLog._meta.db_table), [since])
            found = {int(m): Latency(float(p50), float(p90), int(n)) for m, p50, p90, n in cur}
    else:  # the embedded SQLite: no percentile aggregate
        pairs = np.array(
            CompletionLog.objects.filter(
                succeeded=True, latency_ms__isnull=False, received_at__gte=since
            ).values_list("model_id", "latency_ms"),
            dtype=float,
        ).reshape(-1, 2)
        found = {}
        for model_id in np.unique(pairs[:, 0]):
            values = pairs[pairs[:, 0] == model_id, 1]
            p50, p90 = np.percentile(values, [50, 90])
            found[int(model_id)] = Latency(float(p50), float(p90), int(values.size))
    return {m: lat for m, lat in found.items() if lat.samples >= minimum}
