"""Quarantine: a flag holds a user's recent votes out of the board, counted as held, until a
moderator releases them (counted again) or excludes them (out for good)."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.utils import timezone

from core.models import AuditEntry
from ingest.models import Battle, Hold
from leaderboard.recompute import recompute
from moderation.models import AnomalyReport
from moderation.services import hold_report, resolve_report
from tests.moderation.conftest import logged_in


def _busiest_recent_user() -> str:
    since = timezone.now() - timedelta(days=20)
    users = Battle.objects.filter(received_at__gte=since).values_list("user_hash", flat=True)
    return max(set(users), key=lambda u: Battle.objects.filter(user_hash=u).count())


def _report(user: str) -> AnomalyReport:
    return AnomalyReport.objects.create(
        rule="outlier", subject_kind="user", subject=user, battles=1, detail={}
    )


def test_hold_release_and_exclude_on_the_board(arena, moderator, client):
    first = recompute(trigger="test")
    assert first.held_battles == 0
    user = _busiest_recent_user()
    own = Battle.objects.filter(user_hash=user).count()
    report = _report(user)
    held = hold_report(report)
    window = timezone.now() - timedelta(days=30)
    assert 0 < held == Battle.objects.filter(user_hash=user, received_at__gte=window).count()
    assert held < own  # the window's votes, not the user's whole history
    assert Battle.objects.filter(hold=Hold.QUARANTINE, excluded=True).count() == held
    report.refresh_from_db()
    assert report.held == held and report.status == "open"

    second = recompute(trigger="test")
    assert second.battles == first.battles - held and second.held_battles == held
    page = client.get("/").content.decode()
    assert f"{held} held pending review" in page.replace(",", "")

    # Released: counted again, and not held again by the next run of the rules.
    assert resolve_report(report=report, exclude=False, reason="false alarm", actor=moderator)
    third = recompute(trigger="test")
    assert third.battles == first.battles and third.held_battles == 0
    assert not Battle.objects.exclude(hold="").exists()
    again = _report(user)
    assert hold_report(again) == 0
    late = Battle.objects.filter(user_hash=user).order_by("-received_at").first()
    Battle.objects.filter(pk=late.pk).update(received_at=timezone.now())  # a vote after it
    assert hold_report(again) == 1

    # Excluded: the user's battles leave the board for good, held ones included.
    assert resolve_report(report=again, exclude=True, reason="bot", actor=moderator) == own
    fourth = recompute(trigger="test")
    assert fourth.battles == first.battles - own and fourth.held_battles == 0
    assert set(Battle.objects.filter(user_hash=user).values_list("hold", "excluded")) == {
        ("", True)
    }
    actions = list(AuditEntry.objects.order_by("id").values_list("action", "actor_name"))
    assert actions == [
        ("hold battles", "system"),
        ("release battles", "mod"),
        ("dismiss report", "mod"),
        ("hold battles", "system"),
        ("exclude battles", "mod"),
    ]


def test_a_moderator_releases_held_battles_in_the_admin(arena, moderator):
    ids = list(Battle.objects.values_list("id", flat=True)[:3])
    Battle.objects.filter(id__in=ids).update(hold=Hold.UNVERIFIED, excluded=True)
    assert recompute(trigger="test").held_battles == 3
    r = logged_in(moderator).post(
        "/admin/ingest/battle/",
        {
            "action": "release_battles",
            ACTION_CHECKBOX_NAME: ids,
            "index": 0,
            "apply": "1",
            "reason": "our pair record was lost in an outage",
        },
    )
    assert r.status_code == 302
    assert set(Battle.objects.filter(id__in=ids).values_list("hold", "excluded")) == {("", False)}
    assert AuditEntry.objects.filter(action="release battles", affected=3).exists()


def test_the_api_says_how_many_battles_are_held(arena, client):
    Battle.objects.filter(id__in=list(Battle.objects.values_list("id", flat=True)[:4])).update(
        hold=Hold.QUARANTINE, excluded=True
    )
    snap = recompute(trigger="test")
    assert snap.held_battles == 4 and snap.battles == 4000 - 4
    meta = client.get("/api/v1/leaderboard").json()["snapshot"]
    assert (meta["held_battles"], meta["battles"]) == (4, 3996)
