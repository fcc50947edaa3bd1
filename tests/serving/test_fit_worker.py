"""The latency fit through a real Celery worker on Redis, as beat would run it."""

from __future__ import annotations

import math
import time

import pytest

from serving.models import PairDistribution
from serving.tasks import fit_latencies
from tests.serving.conftest import SERVED, add_provider
from tests.serving.test_sampling import log_latencies

pytestmark = pytest.mark.integration


def test_worker_fits_latencies_from_the_logs(celery_worker, stub, secret_env):
    providers = {k: add_provider(k, kind, remote, stub) for k, (kind, remote) in SERVED.items()}
    fast = providers["codestral-2405"].model
    log_latencies(fast, [0.5] * 50 + [0.7] * 50, tag="w")
    fit_latencies.delay()
    deadline = time.time() + 120  # generous: a busy machine is slow, not wrong
    while time.time() < deadline and not PairDistribution.objects.exists():
        time.sleep(0.2)
    dist = PairDistribution.objects.get()
    fits = {f["key"]: f for f in dist.fits}
    assert fits["codestral-2405"]["n"] == 100
    assert math.exp(fits["codestral-2405"]["mu"]) == pytest.approx(math.sqrt(0.5 * 0.7), rel=0.01)
    assert fits["gpt-4o-2024-08-06"]["n"] == 0
