"""The public pages in a real browser: rows present, every chart drawn, no console errors."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from catalogue.models import ArenaModel
from leaderboard.models import RatingConfig
from leaderboard.recompute import recompute

from .helpers import charts_rendered

pytestmark = pytest.mark.integration


@pytest.fixture
def published(transactional_db):
    config = RatingConfig.current()
    config.rounds, config.slice_rounds = 100, 50
    config.save()
    call_command("simulate_battles", "--battles", "5000", "--seed", "11", stdout=io.StringIO())
    ArenaModel.objects.filter(key="gpt-4o-mini-2024-07-18").update(
        display_name="<script>alert('pwned')</script>Mini"
    )
    recompute(trigger="test")
    recompute(trigger="test")  # two snapshots: a history line


def test_leaderboard_page_renders_rows_and_charts(live_server, published, page):
    page.goto(live_server.url + "/")
    assert page.locator("#board tbody tr").count() == 11
    total, drawn = charts_rendered(page)
    assert total == 6  # intervals, three heatmaps, average win rate, top slot
    assert drawn >= total
    assert page.locator("text=<script>alert('pwned')</script>Mini").count() >= 1  # shown as text
    assert page.dialogs == []
    assert page.console_errors == []


def test_category_selector_and_model_page(live_server, published, page):
    page.goto(live_server.url + "/")
    # The selector applies on change: no second click.
    assert page.locator("form.categories button").is_hidden()
    page.select_option("#category", "task_type:backend")
    page.wait_for_url("**category=task_type*")
    assert "Task type: Backend" in page.title() and "Task type: Backend" in page.inner_text("h1")
    assert page.locator("table.board tbody tr").count() >= 5
    charts_rendered(page)
    page.click("#board tbody tr >> nth=0 >> a")
    page.wait_for_url("**/models/**")
    total, drawn = charts_rendered(page)
    assert total == 3 and drawn >= total  # history, opponents, per slice
    assert page.locator("h2", has_text="Against each opponent").count() == 1
    assert page.console_errors == [] and page.dialogs == []


def test_escaped_model_page(live_server, published, page):
    page.goto(live_server.url + "/models/gpt-4o-mini-2024-07-18/")
    charts_rendered(page)
    assert page.locator("h1").inner_text() == "<script>alert('pwned')</script>Mini"
    assert page.dialogs == [] and page.console_errors == []
