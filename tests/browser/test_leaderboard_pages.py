"""The public pages in a real browser: rows present, every chart drawn, no console errors."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from catalogue.models import ArenaModel
from leaderboard.models import RatingConfig
from leaderboard.recompute import recompute

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


def charts_rendered(page) -> tuple[int, int]:
    page.wait_for_function(
        "() => [...document.querySelectorAll('figure.chart')].every(f => f.dataset.rendered === 'true')",
        timeout=20_000,
    )
    total = page.locator("figure.chart").count()
    drawn = page.locator("figure.chart .main-svg").count()
    return total, drawn


def test_leaderboard_page_renders_rows_and_charts(live_server, published, page):
    page.goto(live_server.url + "/")
    assert page.locator("table.board tbody tr").count() == 11
    total, drawn = charts_rendered(page)
    assert total == 6  # intervals, three heatmaps, average win rate, top slot
    assert drawn >= total
    assert page.locator("text=<script>alert('pwned')</script>Mini").count() >= 1  # shown as text
    assert page.dialogs == []
    assert page.console_errors == []


def test_category_selector_and_model_page(live_server, published, page):
    page.goto(live_server.url + "/")
    page.select_option("#category", "task_type:backend")
    page.click("form.categories button")
    page.wait_for_url("**category=task_type*")
    assert page.locator("table.board tbody tr").count() >= 5
    charts_rendered(page)
    page.click("table.board tbody tr >> nth=0 >> a")
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
