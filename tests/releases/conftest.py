"""Releases write to a storage directory of the test's own."""

from __future__ import annotations

import pytest


@pytest.fixture
def release_dir(tmp_path, settings, monkeypatch):
    """The "releases" storage in a fresh directory (also for a worker started after it)."""
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
