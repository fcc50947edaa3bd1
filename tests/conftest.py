"""Shared fixtures: a small catalogue, API clients, and a clean cache per test.

Django is imported lazily so that `pytest -p no:django tests/analysis` runs the pure
numeric tests without any Django setup.
"""

from __future__ import annotations

import pytest

MODEL_KEYS = ["gpt-4o-2024-08-06", "codestral-2405", "deepseek-coder-fim", "gemini-1.5-flash-002"]


def _django(request) -> bool:
    return request.config.pluginmanager.hasplugin("django")


@pytest.fixture(autouse=True, scope="session")
def _plain_static_storage(request):
    # The production storage names files by the manifest collectstatic writes; the suite
    # does not run collectstatic (deploy/smoke_test.py serves the real thing), so pages
    # here name static files plainly.
    if not _django(request):
        yield
        return
    from django.conf import settings
    from django.test import override_settings

    plain = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
    with override_settings(STORAGES={**settings.STORAGES, "staticfiles": plain}):
        yield


@pytest.fixture(autouse=True)
def _no_vote_triggered_recompute(request):
    # Pipeline tests switch these back on; elsewhere votes and moderation must not
    # enqueue recomputes.
    if _django(request):
        request.getfixturevalue("settings").RECOMPUTE_ON_VOTES = False
        request.getfixturevalue("settings").RECOMPUTE_ON_MODERATION = False


@pytest.fixture(autouse=True)
def _slices_fitted_in_process(request):
    # A recompute would otherwise enqueue a fit_slice task per slice into the test broker
    # for workers that are not there (the fan-out is tested in test_fanout).
    if _django(request):
        request.getfixturevalue("settings").RECOMPUTE_FAN_OUT = False


@pytest.fixture(autouse=True)
def _controlled_fit_every_recompute(request):
    # Each recompute in a test fits its own controlled board (reuse: test_controlled_board).
    if _django(request):
        settings = request.getfixturevalue("settings")
        settings.ARENA_CONTROLLED_REFIT_SECONDS = 0
        settings.ARENA_CONTROLLED_CONTEXT_RESELECT_SECONDS = 0


@pytest.fixture(autouse=True)
def _clean_cache(request):
    if not _django(request):
        yield
        return
    from django.core.cache import cache

    from catalogue.selectors import clear_catalogue_cache
    from core import hotcache

    # Throttle counters and cached boards live in the cache, and the catalogue cache is per
    # process and does not see test transactions roll back: no test may see another's.
    cache.clear()
    clear_catalogue_cache()
    hotcache.clear()
    yield
    cache.clear()
    clear_catalogue_cache()
    hotcache.clear()


@pytest.fixture
def models(db):
    from tests.factories import ArenaModelFactory

    return {key: ArenaModelFactory(key=key) for key in MODEL_KEYS}


@pytest.fixture
def api():
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def api_key(db):
    from core.services import issue_api_key

    _client, key = issue_api_key(name="test client")
    return key


@pytest.fixture
def keyed_api(api_key):
    from rest_framework.test import APIClient

    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key}")
    return c


@pytest.fixture
def celery_worker(transactional_db, settings, monkeypatch):
    """A real Celery worker process on Redis, consuming this test's private queue."""
    from tests.celery_worker import running_worker

    with running_worker(redis_url=settings.REDIS_URL, monkeypatch=monkeypatch) as proc:
        yield proc


@pytest.fixture
def release_dir(tmp_path, settings, monkeypatch):
    """The dataset releases' storage in a fresh directory (also for a worker started after it)."""
    root = tmp_path / "releases"
    root.mkdir()
    settings.ARENA_RELEASES_ROOT = root
    settings.STORAGES = {
        **settings.STORAGES,
        "releases": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(root), "base_url": settings.ARENA_RELEASES_URL},
        },
    }
    monkeypatch.setenv("ARENA_RELEASES_ROOT", str(root))
    return root
