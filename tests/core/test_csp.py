"""Content-Security-Policy (core.middleware.CachedCSPMiddleware): with a body, not on a 304."""

from __future__ import annotations

import pytest

from tests.leaderboard.test_http_cache import publish

pytestmark = pytest.mark.django_db


def test_policy_on_a_200_and_none_on_a_304(client):
    publish()
    full = client.get("/api/v1/categories")
    assert full.status_code == 200
    assert "default-src 'self'" in full["Content-Security-Policy"]
    same = client.get("/api/v1/categories", HTTP_IF_NONE_MATCH=full["ETag"])
    assert same.status_code == 304
    assert not same.has_header("Content-Security-Policy")
    assert same["ETag"] == full["ETag"]


def test_policy_on_errors_and_pages(client):
    missing = client.get("/no-such-page/")
    assert missing.status_code == 404
    assert missing.has_header("Content-Security-Policy")
