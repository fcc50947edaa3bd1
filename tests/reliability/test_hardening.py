"""Hardening: a Content-Security-Policy with no inline script on our pages; admin login lockout."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["/", "/methodology/", "/slices/", "/correlations/", "/external/", "/api/docs/"]


@pytest.mark.parametrize("url", PAGES)
def test_pages_carry_a_csp_without_inline_script(client, db, url):
    r = client.get(url)
    assert r.status_code == 200, url
    policy = r["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";") if d.strip())
    assert directives["script-src"] == "'self'"
    assert "unsafe-inline" not in directives["script-src"]
    assert directives["object-src"] == "'none'" and directives["frame-ancestors"] == "'none'"
    html = r.content.decode()
    for tag in re.findall(r"<script\b[^>]*>", html):
        # Every script is a file of ours, or a JSON data block (never executed).
        assert "src=" in tag or 'type="application/json"' in tag, (url, tag)


def test_no_template_has_an_inline_script_or_handler():
    for path in (ROOT / "templates").rglob("*.html"):
        text = path.read_text()
        for tag in re.findall(r"<script\b[^>]*>", text):
            assert "src=" in tag, (path, tag)
        assert not re.search(r"\son[a-z]+\s*=", text), path
        assert "javascript:" not in text, path


@pytest.fixture
def staff(db):
    return get_user_model().objects.create_superuser("alice", "a@example.org", "right-password-1")


def _login(client, password: str):
    return client.post(
        "/admin/login/?next=/admin/",
        {"username": "alice", "password": password},
        REMOTE_ADDR="198.51.100.7",
    )


def test_admin_login_locks_out_after_repeated_failures(client, staff, settings):
    settings.AXES_FAILURE_LIMIT = 3
    for _ in range(3):
        r = _login(client, "wrong")
        assert r.status_code in (200, 429)
    # Locked out: even the right password is refused now.
    r = _login(client, "right-password-1")
    assert r.status_code == 429
    assert "_auth_user_id" not in client.session


def test_a_few_failures_then_the_right_password_logs_in(client, staff, settings):
    settings.AXES_FAILURE_LIMIT = 3
    for _ in range(2):
        assert _login(client, "wrong").status_code == 200
    r = _login(client, "right-password-1")
    assert r.status_code == 302
    assert client.session["_auth_user_id"] == str(staff.pk)


def test_lockout_is_per_client_address(client, staff, settings):
    settings.AXES_FAILURE_LIMIT = 2
    for _ in range(2):
        _login(client, "wrong")
    assert _login(client, "right-password-1").status_code == 429
    other = client.post(
        "/admin/login/?next=/admin/",
        {"username": "alice", "password": "right-password-1"},
        REMOTE_ADDR="203.0.113.9",
    )
    assert other.status_code == 302
