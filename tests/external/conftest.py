"""Fixtures for the external app: real score files, the demo catalogue, a published board."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from leaderboard.models import RatingConfig

BENCH = Path(settings.BASE_DIR) / "data" / "benchmarks"


@pytest.fixture
def catalogue(db):
    from catalogue.services import seed_demo_catalogue

    seed_demo_catalogue()


@pytest.fixture
def aliases(catalogue):
    from external.services import seed_external_aliases

    return seed_external_aliases()


@pytest.fixture
def fast_config(db):
    config = RatingConfig.current()
    config.rounds, config.slice_rounds = 200, 100
    config.save()
    return config


@pytest.fixture
def published(fast_config, aliases):
    """6,000 simulated battles and a published snapshot (no correlations computed yet)."""
    from leaderboard.recompute import recompute

    call_command("simulate_battles", "--battles", "6000", "--seed", "5", stdout=io.StringIO())
    return recompute(trigger="test")


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()
