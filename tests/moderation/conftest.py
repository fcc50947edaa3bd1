"""Staff users in each role, and a small arena with a published board."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from leaderboard.models import RatingConfig
from moderation.roles import CATALOGUE, MODERATORS, ensure_groups


def _staff(username: str, group: str | None = None, superuser: bool = False):
    User = get_user_model()
    if superuser:
        return User.objects.create_superuser(username, f"{username}@example.com", "pw")
    user = User.objects.create_user(username, f"{username}@example.com", "pw", is_staff=True)
    if group:
        user.groups.add(ensure_groups()[group])
    return user


@pytest.fixture
def moderator(db):
    return _staff("mod", MODERATORS)


@pytest.fixture
def cataloguer(db):
    return _staff("cat", CATALOGUE)


@pytest.fixture
def superuser(db):
    return _staff("root", superuser=True)


@pytest.fixture
def plain_staff(db):
    return _staff("staff")


def logged_in(user) -> Client:
    c = Client()
    c.force_login(user)
    return c


@pytest.fixture
def arena(db):
    config = RatingConfig.current()
    config.rounds, config.slice_rounds = 100, 50
    config.save()
    call_command("simulate_battles", "--battles", "4000", "--seed", "21", stdout=io.StringIO())
