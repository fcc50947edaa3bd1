"""A real Celery worker on Redis: a recompute run by the worker is followed by its
correlations, computed by the worker too (snapshot_ready -> on commit -> task)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from catalogue.services import seed_demo_catalogue
from external.models import CorrelationResult
from external.services import import_demo_scores, seed_external_aliases
from leaderboard.models import RatingConfig, Snapshot
from leaderboard.tasks import recompute_leaderboard
from tests.celery_worker import wait_for

pytestmark = pytest.mark.integration


def test_the_worker_computes_correlations_after_its_recompute(celery_worker):
    seed_demo_catalogue()
    seed_external_aliases()
    import_demo_scores()
    config = RatingConfig.current()
    config.rounds, config.slice_rounds = 100, 50
    config.save()
    call_command("simulate_battles", "--battles", "4000", "--seed", "3", stdout=io.StringIO())
    recompute_leaderboard.delay(trigger="test")
    snapshot = wait_for(lambda: Snapshot.objects.filter(status="published").first(), timeout=90)
    rows = wait_for(
        lambda: (
            CorrelationResult.objects.filter(snapshot=snapshot, slice_key="overall").count() == 14
            and CorrelationResult.objects.filter(snapshot=snapshot)
        )
    )
    assert rows.filter(slice_key__startswith="task_type:").exists()
    assert rows.get(slice_key="overall", board__source__key="chatbot_arena").n == 9
