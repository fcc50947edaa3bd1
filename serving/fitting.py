"""The latency fit behind the pair sampler, run by the Celery task and from the admin."""

from __future__ import annotations

import math
import time
from datetime import datetime, timedelta

from django.utils import timezone

from analysis.latency import fit_lognormal, pooled_prior

from .models import PairDistribution, SamplingConfig
from .selectors import (
    clear_serving_state,
    recent_latencies,
    sampling_table,
    sampling_tau,
    served_providers,
    slot_for,
)

# Latency fits kept (newest); older ones are deleted after each fit.
KEEP_FITS = 200


def fit_pair_distribution(*, now: datetime | None = None) -> PairDistribution:
    """Fit each served model's latency (log-normal, pooled prior) from recent successful
    completions served here, and store the fits with the pair table they give."""
    started = time.perf_counter()
    now = now or timezone.now()
    config = SamplingConfig.current()
    slots = [slot_for(p) for p in served_providers()]
    latencies = recent_latencies(
        model_ids=[s.model_id for s in slots],
        since=now - timedelta(days=config.window_days),
        per_model=config.max_samples_per_model,
    )
    prior = pooled_prior(latencies, weight=config.prior_weight)
    fits = [fit_lognormal(latencies[s.model_id], prior=prior) for s in slots]
    tau = sampling_tau(config)
    table = sampling_table(
        [s.key for s in slots],
        fits,
        tau=tau,
        floor=config.floor,
        information_weight=config.information_weight,
    )
    row = PairDistribution.objects.create(
        computed_at=now,
        window_days=config.window_days,
        samples=sum(f.n for f in fits),
        prior_mu=prior.mu,
        prior_sigma=prior.sigma,
        prior_weight=prior.weight,
        fits=[
            {"model_id": s.model_id, "key": s.key, "mu": f.mu, "sigma": f.sigma, "n": f.n}
            for s, f in zip(slots, fits, strict=True)
        ],
        tau_seconds=None if math.isinf(tau) else tau,
        floor=config.floor,
        information_weight=config.information_weight,
        pairs=table.pairs if table else [],
        median_wait_s=table.median_wait_s if table else None,
        uniform_median_wait_s=table.uniform_median_wait_s if table else None,
        mean_wait_s=table.mean_wait_s if table else None,
        uniform_mean_wait_s=table.uniform_mean_wait_s if table else None,
        duration_ms=(time.perf_counter() - started) * 1000.0,
    )
    stale = PairDistribution.objects.order_by("-id").values_list("id", flat=True)[KEEP_FITS:]
    PairDistribution.objects.filter(id__in=list(stale)).delete()
    clear_serving_state()
    return row
