"""What a visitor meets first: on a 390x844 phone the first model row starts inside the first
screen on the board and on `/slices/`, under one sentence saying what the site is and how many
developers and votes stand behind the board.

With `ARENA_SCREENSHOT_DIR` set, the phone's first screen of `/` is saved there (how
docs/figures/first-screen-*.png were made)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from django.core.management import call_command

from leaderboard.models import RatingConfig
from leaderboard.recompute import recompute

pytestmark = pytest.mark.integration

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def site(transactional_db):
    config = RatingConfig.current()
    config.rounds, config.slice_rounds = 50, 30
    config.save()
    call_command("simulate_battles", "--battles", "4000", "--seed", "5", stdout=io.StringIO())
    recompute(trigger="test")


@pytest.mark.parametrize("path", ["/", "/slices/"])
def test_first_model_row_is_on_the_phones_first_screen(live_server, site, browser, path):
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.goto(live_server.url + path)
    top = page.locator("main table tbody tr").first.evaluate(
        "el => el.getBoundingClientRect().top + window.scrollY"
    )
    shots = os.environ.get("ARENA_SCREENSHOT_DIR")
    if shots and path == "/":
        page.screenshot(path=str(Path(shots) / "first-screen.png"))
    context.close()
    assert top < PHONE["height"], f"{path}: first row at {top:.0f} px"
