"""Rotating SECRET_KEY keeps every user's history and, while the old key is a fallback, sessions.

The documented procedure (docs/deployment.md, "Rotating secrets"): the new key in
SECRET_KEY, the old one in SECRET_KEY_FALLBACKS; later the fallback is dropped. Pseudonyms
(USER_ID_HMAC_KEY, IP_HASH_KEY) do not depend on SECRET_KEY at all, so a user's vote count
and stored pseudonyms never change; a logged-in admin stays logged in while the old key is
a fallback (Django moves a session it sees then to the new key), and a session not seen
during that window has to log in again once the fallback is dropped. Without USER_ID_HMAC_KEY (or with
NUM_PROXIES) a production start stops with an error naming the setting.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings

from ingest.models import Battle
from ingest.pseudonyms import pseudonymise_ip, pseudonymise_user
from tests.ingest.payloads import vote

ROOT = Path(__file__).resolve().parents[2]


def vote_count(api, user: str) -> int:
    resp = api.post(
        "/user_vote_count", data=json.dumps({"userId": user}), content_type="application/json"
    )
    assert resp.status_code == 200, resp.content
    return resp.json()["voteCount"]


@pytest.mark.django_db
def test_rotating_secret_key_keeps_history_and_sessions_while_the_old_key_is_a_fallback(
    api, client, models, settings
):
    from django.test import Client

    idle = Client()  # an admin who does not come back while the old key is a fallback
    old = settings.SECRET_KEY
    user = "machine-rotation"
    for i in range(3):
        resp = api.post(
            "/api/v1/battles",
            data=json.dumps(vote(pair_id=f"rot-{i}", user_id=user)),
            content_type="application/json",
            REMOTE_ADDR="203.0.113.5",
        )
        assert resp.status_code == 201, resp.content
    stored = set(Battle.objects.values_list("user_hash", "ip_hash"))
    admin = get_user_model().objects.create_superuser("rot-admin", "r@example.org", "pw-1-long")
    for c in (client, idle):
        c.force_login(admin)  # sessions whose auth hash is keyed by SECRET_KEY
        assert c.get("/admin/").status_code == 200
    assert vote_count(api, user) == 3

    with override_settings(SECRET_KEY="the-new-key-" + "x" * 40, SECRET_KEY_FALLBACKS=[old]):
        assert client.get("/admin/").status_code == 200  # the session survives
        assert vote_count(api, user) == 3
        resp = api.post(
            "/api/v1/battles",
            data=json.dumps(vote(pair_id="rot-new", user_id=user)),
            content_type="application/json",
            REMOTE_ADDR="203.0.113.5",
        )
        assert resp.status_code == 201
        assert vote_count(api, user) == 4  # new votes join the same history

    with override_settings(SECRET_KEY="the-new-key-" + "x" * 40, SECRET_KEY_FALLBACKS=[]):
        assert client.get("/admin/").status_code == 200  # moved to the new key meanwhile
        gone = idle.get("/admin/")
        assert gone.status_code == 302 and "/admin/login/" in gone["Location"]  # log in again
        assert vote_count(api, user) == 4  # history unchanged
        assert set(Battle.objects.values_list("user_hash", "ip_hash")) == stored
        assert stored == {(pseudonymise_user(user), pseudonymise_ip("203.0.113.5"))}


def _start(env_changes: dict[str, str | None]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env.update({"DATABASE_URL": "postgres://postgres@127.0.0.1:5432/unused", "DEBUG": "0"})
    for key, value in env_changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return subprocess.run(
        [sys.executable, "-c", "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'arena_site.settings'); django.setup()"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_production_start_without_user_id_hmac_key_stops_naming_it():
    result = _start({"SECRET_KEY": "s" * 50, "USER_ID_HMAC_KEY": None, "IP_HASH_KEY": None})
    assert result.returncode != 0
    assert "USER_ID_HMAC_KEY is not set" in result.stderr
    assert "set it to that SECRET_KEY's value" in result.stderr  # the upgrade's way out


def test_num_proxies_stops_the_start_and_names_its_replacement():
    result = _start({"SECRET_KEY": "s" * 50, "USER_ID_HMAC_KEY": "k" * 50, "NUM_PROXIES": "1"})
    assert result.returncode != 0 and "TRUSTED_PROXIES" in result.stderr


def test_secret_key_fallbacks_come_from_the_environment():
    result = _start(
        {"SECRET_KEY": "new" * 20, "SECRET_KEY_FALLBACKS": "old1" * 10 + "," + "old2" * 10,
         "USER_ID_HMAC_KEY": "k" * 50}
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    code = "from django.conf import settings; print(len(settings.SECRET_KEY_FALLBACKS))"
    env = {**os.environ, "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/unused", "DEBUG": "0",
           "SECRET_KEY": "new" * 20, "SECRET_KEY_FALLBACKS": "a" * 40 + "," + "b" * 40,
           "USER_ID_HMAC_KEY": "k" * 50}  # fmt: skip
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.stdout.strip().splitlines()[-1] == "2", out.stderr
