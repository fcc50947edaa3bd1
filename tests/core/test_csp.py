"""Content-Security-Policy (django-csp's middleware, the policy in settings) on every answer."""

from __future__ import annotations

import pytest

from tests.leaderboard.test_http_cache import publish

pytestmark = pytest.mark.django_db


def test_policy_on_a_200_and_the_same_on_its_304(client):
    publish()
    full = client.get("/api/v1/categories")
    assert full.status_code == 200
    assert "default-src 'self'" in full["Content-Security-Policy"]
    same = client.get("/api/v1/categories", HTTP_IF_NONE_MATCH=full["ETag"])
    assert same.status_code == 304
    # A cache that revalidates updates the stored headers: the policy must not change.
    assert same["Content-Security-Policy"] == full["Content-Security-Policy"]
    assert same["ETag"] == full["ETag"]


def test_policy_on_errors_and_pages(client):
    missing = client.get("/no-such-page/")
    assert missing.status_code == 404
    assert missing.has_header("Content-Security-Policy")
