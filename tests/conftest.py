"""Shared fixtures: a small catalogue, API clients, and a clean cache per test."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from ingest.services import issue_api_key
from leaderboard.selectors import clear_catalogue_cache
from tests.factories import ArenaModelFactory

MODEL_KEYS = ["gpt-4o-2024-08-06", "codestral-2405", "deepseek-coder-fim", "gemini-1.5-flash-002"]


@pytest.fixture(autouse=True)
def _no_vote_triggered_recompute(settings):
    # Pipeline tests switch this back on; elsewhere votes must not enqueue recomputes.
    settings.RECOMPUTE_ON_VOTES = False


@pytest.fixture(autouse=True)
def _clean_cache():
    # Throttle counters and cached pages live in the cache; tests must not see each other's.
    # The catalogue cache is per process and does not see test transactions roll back.
    cache.clear()
    clear_catalogue_cache()
    yield
    cache.clear()
    clear_catalogue_cache()


@pytest.fixture
def models(db):
    return {key: ArenaModelFactory(key=key) for key in MODEL_KEYS}


@pytest.fixture
def api():
    return APIClient()


@pytest.fixture
def api_key(db):
    _client, key = issue_api_key(name="test client")
    return key


@pytest.fixture
def keyed_api(api_key):
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key}")
    return c
