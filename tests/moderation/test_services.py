"""Each moderation action, its audit entry, and its effect on the next snapshot."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from catalogue.models import ArenaModel, Visibility
from catalogue.selectors import resolve_model_key
from catalogue.services import merge_model, unmerge_model
from core.errors import ActionRefused
from core.models import AuditEntry
from ingest.models import Battle
from leaderboard.recompute import recompute
from leaderboard.selectors import board
from moderation.services import exclude_time_range, exclude_user, set_excluded


def votes_of(key: str, snapshot) -> int | None:
    return next(
        (m["votes"] for m in board(snapshot_id=snapshot.pk)["models"] if m["model"] == key), None
    )


def test_excluded_battles_leave_the_next_board_and_come_back(arena, moderator):
    first = recompute(trigger="test")
    battles = Battle.objects.filter(model_a__key="codestral-2405")[:50]
    ids = list(battles.values_list("id", flat=True))
    n = set_excluded(
        battles=Battle.objects.filter(id__in=ids),
        exclude=True,
        reason="spam wave",
        actor=moderator,
        target="50 battles",
    )
    assert n == 50
    assert (
        Battle.objects.filter(id__in=ids, excluded=True, excluded_reason="spam wave").count() == 50
    )
    second = recompute(trigger="test")
    assert second.battles == first.battles - 50
    assert votes_of("codestral-2405", second) == votes_of("codestral-2405", first) - 50
    set_excluded(
        battles=Battle.objects.filter(id__in=ids),
        exclude=False,
        reason="false alarm",
        actor=moderator,
        target="50 battles",
    )
    third = recompute(trigger="test")
    assert third.battles == first.battles and Battle.objects.count() == 4000  # never deleted
    entries = list(
        AuditEntry.objects.order_by("id").values_list("action", "actor_name", "reason", "affected")
    )
    assert entries == [
        ("exclude battles", "mod", "spam wave", 50),
        ("restore battles", "mod", "false alarm", 50),
    ]
    first_entry = AuditEntry.objects.order_by("id").first()
    assert first_entry.before["excluded"] == 0 and first_entry.after["excluded"] == 50


def test_reason_is_required(arena, moderator):
    with pytest.raises(ActionRefused, match="reason"):
        set_excluded(
            battles=Battle.objects.all(), exclude=True, reason="  ", actor=moderator, target="all"
        )
    assert not Battle.objects.filter(excluded=True).exists() and not AuditEntry.objects.exists()


def test_exclude_all_battles_of_a_user(arena, moderator):
    user = Battle.objects.values_list("user_hash", flat=True).first()
    own = Battle.objects.filter(user_hash=user).count()
    assert exclude_user(user_hash=user, reason="bot", actor=moderator) == own
    assert recompute(trigger="test").battles == 4000 - own
    assert (
        exclude_user(user_hash=user, reason="appeal upheld", actor=moderator, restore=True) == own
    )
    with pytest.raises(ActionRefused, match="No battles"):
        exclude_user(user_hash="0" * 64, reason="x", actor=moderator)


def test_exclude_a_time_range(arena, moderator):
    end = timezone.now()
    start = end - timedelta(days=10)
    inside = Battle.objects.filter(received_at__gte=start, received_at__lt=end).count()
    assert 0 < inside < 4000
    assert (
        exclude_time_range(start=start, end=end, reason="outage replay", actor=moderator) == inside
    )
    assert Battle.objects.filter(excluded=True).count() == inside
    with pytest.raises(ActionRefused, match="after its start"):
        exclude_time_range(start=end, end=start, reason="x", actor=moderator)


def test_hidden_model_leaves_the_public_board_and_keeps_its_votes(arena):
    first = recompute(trigger="test")
    ArenaModel.objects.filter(key="gpt-4o-2024-08-06").update(visibility=Visibility.HIDDEN)
    second = recompute(trigger="test")
    assert votes_of("gpt-4o-2024-08-06", first) is not None
    assert votes_of("gpt-4o-2024-08-06", second) is None
    assert second.battles == first.battles  # its battles still count for the others


def test_merged_alias_votes_move_to_the_target_and_back(arena, cataloguer):
    dup = ArenaModel.objects.create(key="codestral-latest", display_name="Codestral latest")
    codestral = ArenaModel.objects.get(key="codestral-2405")
    moved = Battle.objects.filter(model_a__key="gpt-4o-mini-2024-07-18")[:40]
    ids = list(moved.values_list("id", flat=True))
    Battle.objects.filter(id__in=ids).update(model_a=dup)
    first = recompute(trigger="test")
    before = votes_of("codestral-2405", first)
    merge_model(source=dup, target=codestral, reason="same model, renamed key", actor=cataloguer)
    assert (
        resolve_model_key("codestral-latest").key == "codestral-2405"
    )  # new votes go to the target
    second = recompute(trigger="test")
    # the 40 battles now count for codestral, except those against codestral itself: they
    # become self-battles, dropped, and codestral also loses them as its own votes
    self_battles = Battle.objects.filter(id__in=ids, model_b=codestral).count()
    assert self_battles > 0
    assert votes_of("codestral-2405", second) == before + 40 - 2 * self_battles
    assert second.battles == first.battles - self_battles
    assert Battle.objects.filter(id__in=ids, model_a=dup).count() == 40  # rows untouched
    unmerge_model(source=dup, reason="they differ after all", actor=cataloguer)
    third = recompute(trigger="test")
    assert votes_of("codestral-2405", third) == before
    actions = list(AuditEntry.objects.order_by("id").values_list("action", flat=True))
    assert actions == ["merge model", "unmerge model"]


def test_merge_rules(arena, cataloguer):
    a = ArenaModel.objects.get(key="codestral-2405")
    b = ArenaModel.objects.get(key="deepseek-coder-fim")
    with pytest.raises(ActionRefused, match="itself"):
        merge_model(source=a, target=a, reason="x", actor=cataloguer)
    merge_model(source=a, target=b, reason="x", actor=cataloguer)
    c = ArenaModel.objects.get(key="gpt-4o-2024-08-06")
    with pytest.raises(ActionRefused, match="itself merged"):
        merge_model(source=c, target=a, reason="x", actor=cataloguer)
