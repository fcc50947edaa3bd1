"""Fixtures for leaderboard tests: a database with simulated battles and a published board."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from leaderboard.models import RatingConfig


@pytest.fixture
def fast_config(db):
    config = RatingConfig.current()
    config.rounds = 200
    config.slice_rounds = 100
    config.save()
    return config


@pytest.fixture
def simulated(fast_config):
    call_command("simulate_battles", "--battles", "6000", "--seed", "5", stdout=io.StringIO())
