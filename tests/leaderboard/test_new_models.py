"""The "new" badge (leaderboard/new_models.py): first rated within ARENA_NEW_MODEL_DAYS."""

from __future__ import annotations

import datetime as dt
import re

from django.utils import timezone

from leaderboard import new_models
from tests.factories import ArenaModelFactory

from .boards import publish_board


def badge_of(html: str, display_name: str) -> bool:
    """Whether the board row or heading of `display_name` carries the badge."""
    pattern = re.escape(display_name) + r'</a>\s*<span class="badge new"'
    return re.search(pattern, html) is not None


def test_recent_model_is_new_and_an_old_one_is_not(client, db):
    now = timezone.now()
    veteran = ArenaModelFactory(key="veteran", display_name="Veteran Model")
    newcomer = ArenaModelFactory(key="newcomer", display_name="Newcomer Model")
    founder = ArenaModelFactory(key="founder")  # the first board's: never new (see below)
    publish_board(at=now - dt.timedelta(days=100), models=[founder])
    publish_board(at=now - dt.timedelta(days=30), models=[founder, veteran])
    publish_board(at=now - dt.timedelta(days=3), models=[founder, veteran, newcomer])
    publish_board(at=now, models=[founder, veteran, newcomer])

    new = new_models.new_models()
    assert set(new) == {"newcomer"}
    assert abs(new["newcomer"] - (now - dt.timedelta(days=3))) < dt.timedelta(seconds=1)

    html = client.get("/").content.decode()
    assert badge_of(html, "Newcomer Model") and not badge_of(html, "Veteran Model")
    # Text, not colour only: the badge says "new" and when the model was first rated.
    first = (now - dt.timedelta(days=3)).strftime("%Y-%m-%d")
    assert f'new<span class="visually-hidden">: first rated on {first}</span>' in html

    page = client.get("/models/newcomer/").content.decode()
    assert 'id="new-badge"' in page and f"first rated on {first}" in page
    assert 'id="new-badge"' not in client.get("/models/veteran/").content.decode()


def test_the_setting_is_respected(client, db, settings):
    now = timezone.now()
    founder = ArenaModelFactory(key="founder")
    m = ArenaModelFactory(key="recent", display_name="Recent Model")
    publish_board(at=now - dt.timedelta(days=100), models=[founder])
    publish_board(at=now - dt.timedelta(days=3), models=[founder, m])
    publish_board(at=now, models=[founder, m])
    settings.ARENA_NEW_MODEL_DAYS = 2
    assert new_models.new_models() == {}
    assert not badge_of(client.get("/").content.decode(), "Recent Model")
    settings.ARENA_NEW_MODEL_DAYS = 4
    assert set(new_models.new_models()) == {"recent"}


def test_first_rated_counts_only_public_rows_and_is_measured_from_the_board(db):
    now = timezone.now()
    founder = ArenaModelFactory(key="founder")
    m = ArenaModelFactory(key="was-private")
    publish_board(at=now - dt.timedelta(days=100), models=[founder])
    # Rated while private 60 days ago (not shown), first shown publicly 5 days ago.
    publish_board(at=now - dt.timedelta(days=60), models=[m], public=False)
    publish_board(at=now - dt.timedelta(days=5), models=[founder, m])
    snap = publish_board(at=now - dt.timedelta(days=1), models=[founder, m])
    first = new_models.first_rated(snapshot_id=snap.pk)
    assert abs(first["was-private"] - (now - dt.timedelta(days=5))) < dt.timedelta(seconds=1)
    # Measured from the published board's time, not the clock: 5 days before a board of
    # 20 days later is outside the 14 days.
    later = publish_board(at=now + dt.timedelta(days=15), models=[m])
    assert new_models.new_models(snapshot_id=later.pk) == {}
    assert set(new_models.new_models(snapshot_id=snap.pk)) == {"was-private"}


def test_badge_keeps_the_board_cacheable(client, db):
    now = timezone.now()
    founder = ArenaModelFactory(key="founder")
    m = ArenaModelFactory(key="cached-new", display_name="Cached New")
    publish_board(at=now - dt.timedelta(days=20), models=[founder])
    publish_board(at=now - dt.timedelta(days=1), models=[founder, m])
    r = client.get("/")
    assert r.status_code == 200 and badge_of(r.content.decode(), "Cached New")
    assert "public" in r["Cache-Control"] and r.has_header("ETag")
    again = client.get("/", HTTP_IF_NONE_MATCH=r["ETag"])
    assert again.status_code == 304


def test_the_first_boards_models_are_founders_not_new(client, db):
    """On a fresh site every model was first rated days ago: none is singled out."""
    now = timezone.now()
    a = ArenaModelFactory(key="first-a", display_name="First A")
    b = ArenaModelFactory(key="first-b", display_name="First B")
    publish_board(at=now - dt.timedelta(days=2), models=[a, b])
    publish_board(at=now, models=[a, b])
    assert new_models.new_models() == {}
    assert "badge new" not in client.get("/").content.decode()
