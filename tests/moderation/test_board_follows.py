"""Moderators see their changes: each admin change to what the board counts schedules a
recompute, says when the board follows, and a hidden model loses its page at once."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client

from catalogue.models import ArenaModel
from ingest.models import Battle
from leaderboard import tasks
from leaderboard.board_changes import MODERATION_KEY
from leaderboard.models import RatingConfig
from leaderboard.recompute import recompute
from tests.celery_worker import wait_for
from tests.moderation.conftest import logged_in


def hide_form(model: ArenaModel) -> dict:
    return {
        "key": model.key,
        "display_name": model.display_name,
        "organization": model.organization,
        "license": model.license,
        "style": model.style,
        "visibility": "hidden",
        "description": "",
        "audit_reason": "licence dispute",
        "aliases-TOTAL_FORMS": 0,
        "aliases-INITIAL_FORMS": 0,
        "aliases-MIN_NUM_FORMS": 0,
        "aliases-MAX_NUM_FORMS": 1000,
    }


def board_keys(client: Client) -> set[str]:
    r = client.get("/api/v1/leaderboard?category=overall")
    assert r.status_code == 200
    return {m["model"] for m in json.loads(r.content)["models"]}


@pytest.fixture
def small_arena(db):
    config = RatingConfig.current()
    config.rounds, config.slice_rounds, config.min_model_votes = 50, 20, 1
    config.save()
    call_command("simulate_battles", "--battles", "400", "--seed", "3", stdout=io.StringIO())
    recompute(trigger="test")
    return ArenaModel.objects.get(key="codestral-2405")


@pytest.fixture
def scheduled(settings, monkeypatch):
    settings.RECOMPUTE_ON_MODERATION = True
    runs: list[dict] = []
    monkeypatch.setattr(tasks.recompute_leaderboard, "apply_async", lambda *a, **k: runs.append(k))
    return runs


def test_hiding_schedules_a_recompute_and_the_page_404s_at_once(
    request, small_arena, scheduled, django_capture_on_commit_callbacks
):
    model = small_arena
    public = Client()
    assert public.get(f"/models/{model.key}/").status_code == 200  # now in the page cache
    assert "recomputing" not in public.get("/").content.decode()
    cat = logged_in(request.getfixturevalue("cataloguer"))
    with django_capture_on_commit_callbacks(execute=True):
        r = cat.post(
            f"/admin/catalogue/arenamodel/{model.pk}/change/", hide_form(model), follow=True
        )
    text = " ".join(str(m.message) for m in r.context["messages"])
    assert f"“{model.display_name}” is now hidden" in text
    assert "The public board is recomputed within about" in text
    assert scheduled == [{"kwargs": {"trigger": "moderation"}, "countdown": 10}]
    assert public.get(f"/models/{model.key}/").status_code == 404
    assert 'id="recomputing"' in public.get("/").content.decode()

    tasks.recompute_leaderboard.apply(kwargs={"trigger": "moderation"})
    assert cache.get(MODERATION_KEY) is None
    assert 'id="recomputing"' not in public.get("/").content.decode()
    assert model.key not in board_keys(public)


def test_excluding_battles_says_when_the_board_follows(
    request, small_arena, scheduled, django_capture_on_commit_callbacks
):
    mod = logged_in(request.getfixturevalue("moderator"))
    ids = list(Battle.objects.values_list("id", flat=True)[:3])
    with django_capture_on_commit_callbacks(execute=True):
        r = mod.post(
            "/admin/ingest/battle/",
            {
                "action": "exclude_battles",
                ACTION_CHECKBOX_NAME: ids,
                "index": 0,
                "apply": "1",
                "reason": "spam",
            },
            follow=True,
        )
    text = " ".join(str(m.message) for m in r.context["messages"])
    assert "Excluded 3 battle(s). The public board is recomputed within about" in text
    assert len(scheduled) == 1


def test_nothing_changed_schedules_nothing(request, small_arena, scheduled):
    mod = logged_in(request.getfixturevalue("moderator"))
    r = mod.post(
        "/admin/ingest/battle/",
        {
            "action": "restore_battles",
            ACTION_CHECKBOX_NAME: [Battle.objects.first().pk],
            "index": 0,
            "apply": "1",
            "reason": "none excluded",
        },
        follow=True,
    )
    text = " ".join(str(m.message) for m in r.context["messages"])
    assert text == "Restored 0 battle(s)." and scheduled == []


def test_merge_message_uses_display_names(
    request, small_arena, scheduled, django_capture_on_commit_callbacks
):
    source = small_arena
    target = ArenaModel.objects.exclude(pk=source.pk).filter(visibility="public").first()
    cat = logged_in(request.getfixturevalue("cataloguer"))
    with django_capture_on_commit_callbacks(execute=True):
        r = cat.post(
            f"/admin/catalogue/arenamodel/{source.pk}/merge/",
            {"target": target.pk, "reason": "duplicate"},
            follow=True,
        )
    text = " ".join(str(m.message) for m in r.context["messages"])
    assert (
        f"The votes of “{source.display_name}” ({source.key}) now count for “{target.display_name}”."
        in text
    )
    assert "recomputed within about" in text and len(scheduled) == 1


def test_recompute_page_shows_title_once_a_human_time_and_a_message(request, small_arena):
    mod = logged_in(request.getfixturevalue("moderator"))
    r = mod.post("/admin/leaderboard/snapshot/recompute/", follow=True)
    page = r.content.decode()
    assert page.count("<h1>Recompute the leaderboard</h1>") == 1
    text = " ".join(str(m.message) for m in r.context["messages"])
    assert text.startswith("Recompute requested: the new board is published within about")
    assert " UTC, " in page and " ago</time>" in page
    status = page.split('id="recompute-status"')[1].split("</p>")[0]
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:", re.sub(r"<[^>]+>", "", status))


@pytest.mark.integration
def test_a_hidden_model_leaves_the_public_board_within_a_minute(request, celery_worker, settings):
    """Default debounces; a real worker; the deadline is the issue's target, polled."""
    settings.RECOMPUTE_ON_MODERATION = True
    assert settings.RECOMPUTE_MODERATION_DEBOUNCE_SECONDS == 10
    assert settings.RECOMPUTE_DEBOUNCE_SECONDS == 30
    config = RatingConfig.current()
    config.rounds, config.slice_rounds, config.min_model_votes = 50, 20, 1
    config.save()
    call_command("simulate_battles", "--battles", "400", "--seed", "3", stdout=io.StringIO())
    recompute(trigger="test")
    model = ArenaModel.objects.get(key="codestral-2405")
    public = Client()
    assert model.key in board_keys(public)
    cat = logged_in(request.getfixturevalue("cataloguer"))
    r = cat.post(f"/admin/catalogue/arenamodel/{model.pk}/change/", hide_form(model))
    assert r.status_code == 302
    assert public.get(f"/models/{model.key}/").status_code == 404
    wait_for(lambda: model.key not in board_keys(public), timeout=60, interval=1)
    wait_for(lambda: 'id="recomputing"' not in public.get("/").content.decode(), timeout=10)


def test_the_embedded_mode_recomputes_in_process(request, transactional_db, settings):
    """No worker (tasks run in this process): the change still reaches the board."""
    settings.RECOMPUTE_ON_MODERATION = True
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.RECOMPUTE_MODERATION_DEBOUNCE_SECONDS = 1
    config = RatingConfig.current()
    config.rounds, config.slice_rounds, config.min_model_votes = 50, 20, 1
    config.save()
    call_command("simulate_battles", "--battles", "400", "--seed", "3", stdout=io.StringIO())
    recompute(trigger="test")
    model = ArenaModel.objects.get(key="codestral-2405")
    public = Client()
    assert model.key in board_keys(public)
    cat = logged_in(request.getfixturevalue("cataloguer"))
    r = cat.post(f"/admin/catalogue/arenamodel/{model.pk}/change/", hide_form(model))
    assert r.status_code == 302
    wait_for(lambda: model.key not in board_keys(public), timeout=60, interval=0.5)
    # The in-process run has finished (its status written last), before the test's tables go.
    wait_for(
        lambda: (
            (tasks.get_status() or {}).get("state") == "done"
            and tasks.get_status()["trigger"] == "moderation"
        ),
        timeout=60,
    )
