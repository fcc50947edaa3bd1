"""The latency fit (Celery task) reads the right completion logs, and the endpoint samples
from what it produced under the current tau and floor."""

from __future__ import annotations

import math
from collections import Counter
from datetime import timedelta

import numpy as np
import pytest
from django.conf import settings as django_settings
from django.utils import timezone

from arena_site.celery import app as celery_app
from ingest.models import CompletionLog, Privacy
from serving.models import PairDistribution, SamplingConfig
from serving.selectors import serving_state
from serving.tasks import fit_latencies
from tests.serving.test_create_pair import post_pair

FAST, SLOW, NEW = "codestral-2405", "gpt-4o-2024-08-06", "deepseek-coder-fim"


def log_latencies(model, seconds, *, served=True, succeeded=True, age=timedelta(0), tag="x"):
    now = timezone.now()
    CompletionLog.objects.bulk_create(
        CompletionLog(
            completion_id=f"{tag}-{model.pk}-{i}",
            model=model,
            latency_ms=s * 1000.0,
            privacy=Privacy.PRIVATE,
            served_by_us=served,
            succeeded=succeeded,
            received_at=now - age,
        )
        for i, s in enumerate(seconds)
    )


@pytest.fixture
def logged(served):
    """FAST ~ 0.4 s and SLOW ~ 2.0 s median (200 each, sigma 0.3); NEW has no latencies.
    Plus rows the fit must ignore: not served here, failed, too old, no latency."""
    rng = np.random.default_rng(7)
    fast, slow, new = (served[k].model for k in (FAST, SLOW, NEW))
    log_latencies(fast, rng.lognormal(math.log(0.4), 0.3, 200), tag="fast")
    log_latencies(slow, rng.lognormal(math.log(2.0), 0.3, 200), tag="slow")
    log_latencies(fast, [30.0] * 300, served=False, tag="extension")  # reported by clients
    log_latencies(fast, [25.0] * 300, succeeded=False, tag="failed")  # timeouts
    log_latencies(slow, [0.01] * 300, age=timedelta(days=30), tag="old")  # outside 14 days
    CompletionLog.objects.create(
        completion_id="nolat", model=new, privacy=Privacy.PRIVATE, served_by_us=True
    )
    return served


def fits_by_key(dist: PairDistribution) -> dict:
    return {f["key"]: f for f in dist.fits}


def test_fit_task_reads_only_recent_successful_served_latencies(logged):
    result = fit_latencies.apply()
    dist = PairDistribution.objects.get(pk=result.get())
    fits = fits_by_key(dist)
    assert fits[FAST]["n"] == 200 and fits[SLOW]["n"] == 200 and fits[NEW]["n"] == 0
    assert dist.samples == 400
    # Shrinkage toward the prior is 5 / 205: the fits recover the simulated medians.
    assert math.exp(fits[FAST]["mu"]) == pytest.approx(0.4, rel=0.08)
    assert math.exp(fits[SLOW]["mu"]) == pytest.approx(2.0, rel=0.08)
    assert fits[FAST]["sigma"] == pytest.approx(0.3, rel=0.2)
    # The new model gets the pooled prior: typical of the others, so it is still drawn.
    assert dist.prior_mu == pytest.approx((fits[FAST]["mu"] + fits[SLOW]["mu"]) / 2, abs=0.02)
    assert (fits[NEW]["mu"], fits[NEW]["sigma"]) == (dist.prior_mu, dist.prior_sigma)
    # The stored table: three pairs, the fast pair most likely, waits below uniform.
    assert len(dist.pairs) == 3 and sum(p["p"] for p in dist.pairs) == pytest.approx(1.0)
    assert {dist.pairs[0]["a"], dist.pairs[0]["b"]} == {FAST, NEW}
    assert dist.median_wait_s < dist.uniform_median_wait_s


def test_the_endpoint_samples_from_the_fit(api, logged, stub):
    config = SamplingConfig.current()
    config.tau_seconds, config.floor = 0.1, 0.2
    config.save()
    dist = PairDistribution.objects.get(pk=fit_latencies.apply().get())
    state = serving_state()
    assert state.distribution_id == dist.pk
    keys = [s.key for s in state.slots]
    fitted = fits_by_key(dist)
    assert [f.mu for f in state.fits] == [fitted[k]["mu"] for k in keys]
    probs = state.probabilities(chat_only=False)
    stored = {frozenset((p["a"], p["b"])): p["p"] for p in dist.pairs}
    for i in range(3):
        for j in range(i + 1, 3):
            assert probs[i, j] == pytest.approx(stored[frozenset((keys[i], keys[j]))])
    # tau = 0.1 s: the fastest pair takes 1 - floor of the mass plus its floor share.
    assert stored[frozenset((FAST, NEW))] > 0.85
    pairs = Counter(
        frozenset(i["model"] for i in post_pair(api).json()["completionItems"]) for _ in range(60)
    )
    assert pairs[frozenset((FAST, NEW))] >= 42  # expected ~52 of 60
    assert sum(pairs.values()) == 60


def test_floor_and_uniform_tau(logged):
    config = SamplingConfig.current()
    config.tau_seconds, config.floor = 0.0, 0.3  # greedy, with a 30% floor
    config.save()
    fit_latencies.apply()
    probs = serving_state().probabilities(chat_only=False)
    upper = probs[np.triu_indices(3, 1)]
    assert upper.min() == pytest.approx(0.3 / 3)  # floor x uniform share, exactly
    config.tau_seconds = None  # uniform; takes effect without a refit
    config.save()
    probs = serving_state().probabilities(chat_only=False)
    assert probs[np.triu_indices(3, 1)] == pytest.approx([1 / 3] * 3)


def test_without_any_fit_every_model_gets_the_default_prior(served):
    state = serving_state()
    assert state.distribution_id is None
    assert {(f.mu, f.sigma, f.n) for f in state.fits} == {(0.0, 0.5, 0)}
    assert state.probabilities(chat_only=False)[np.triu_indices(3, 1)] == pytest.approx([1 / 3] * 3)


def test_fit_keeps_a_bounded_history_and_the_task_is_scheduled(logged):
    for _ in range(3):
        fit_latencies.apply()
    assert PairDistribution.objects.count() == 3
    assert "serving.tasks.fit_latencies" in celery_app.tasks
    schedule = [e["task"] for e in django_settings.CELERY_BEAT_SCHEDULE.values()]
    assert "serving.tasks.fit_latencies" in schedule


def test_admin_shows_the_pair_table_and_median_waits(admin_client, logged):
    config = SamplingConfig.current()
    config.tau_seconds = 0.5
    config.save()
    fit_latencies.apply()
    page = admin_client.get(f"/admin/serving/samplingconfig/{config.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="sampling-pairs"' in html and html.count("\u00d7</td>") >= 6
    assert 'id="median-wait"' in html and 'id="uniform-median-wait"' in html
    from serving.selectors import fits_for, sampling_table, served_providers, slot_for

    slots = [slot_for(p) for p in served_providers()]
    table = sampling_table(
        [s.key for s in slots],
        fits_for(slots, PairDistribution.objects.first(), prior_weight=5.0),
        tau=0.5,
        floor=config.floor,
    )
    assert f'id="median-wait">{table.median_wait_s:.3f}<' in html
    assert f'id="uniform-median-wait">{table.uniform_median_wait_s:.3f}<' in html
    assert table.median_wait_s < table.uniform_median_wait_s
    # The list page leads to the one row; the fit button works.
    assert admin_client.get("/admin/serving/samplingconfig/").status_code == 302
    before = PairDistribution.objects.count()
    response = admin_client.post("/admin/serving/samplingconfig/fit/")
    assert response.status_code == 302
    assert PairDistribution.objects.count() == before + 1
