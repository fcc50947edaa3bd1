"""No dead ends: a merged model's page moves to its target, which names it; a public model
with too few votes has a place on the board; a search without matches says what happened;
every public section is in the navigation; the API docs say their language and lead back;
code blocks scroll by keyboard."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from catalogue.models import ArenaModel, Visibility
from leaderboard.models import RatingConfig
from leaderboard.recompute import recompute

pytestmark = pytest.mark.integration


@pytest.fixture
def site(transactional_db):
    config = RatingConfig.current()
    config.rounds, config.slice_rounds = 50, 30
    config.save()
    call_command("simulate_battles", "--battles", "3000", "--seed", "7", stdout=io.StringIO())
    target = ArenaModel.objects.get(key="codestral-2405")
    ArenaModel.objects.create(
        key="codestral-old", display_name="Codestral (old key)", merged_into=target,
        visibility=Visibility.PUBLIC,
    )  # fmt: skip
    ArenaModel.objects.create(key="brand-new-model", display_name="Brand New Model")
    recompute(trigger="test")


def test_merged_model_redirects_to_its_target(live_server, site, client):
    response = client.get("/models/codestral-old/")
    assert response.status_code == 301 and response["Location"] == "/models/codestral-2405/"
    html = client.get("/models/codestral-2405/").content.decode()
    assert "Codestral (old key) (codestral-old)" in html


def test_board_lists_a_public_model_without_votes_as_provisional(live_server, site, page):
    page.goto(live_server.url + "/")
    section = page.locator("#provisional")
    assert "Brand New Model" in section.inner_text()
    # A merged key is counted under its target, never listed on its own.
    assert "Codestral (old key)" not in section.inner_text()
    assert page.locator("#provisional-table tbody tr", has_text="Brand New Model").count() == 1


def test_search_without_matches_says_what_happened(live_server, site, browser):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(live_server.url + "/?q=zzzz-nothing")
    text = page.locator("#board tbody").inner_text()
    assert "No model on this board matches “zzzz-nothing”" in text
    assert "enough votes" not in text
    page.locator("#board tbody a", has_text="Show all").click()
    assert page.locator("#board tbody tr").count() > 5
    context.close()


def test_navigation_api_docs_and_code_blocks(live_server, site, page):
    page.goto(live_server.url + "/")
    nav = page.locator("header nav").inner_text()
    assert "Contributors" in nav and "External" in nav
    page.goto(live_server.url + "/take-part/")
    assert page.locator("pre.snippet").get_attribute("tabindex") == "0"
    page.goto(live_server.url + "/api/docs/")
    assert page.locator("html").get_attribute("lang") == "en"
    page.wait_for_function(
        "() => document.body.innerText.includes('Code Completion Arena API')", timeout=30_000
    )
    # Operation paths are text inside their toggle, not links nested in a button.
    page.wait_for_selector(".opblock-summary-control", timeout=30_000)
    assert page.locator(".opblock-summary-control a[href]").count() == 0
    assert page.locator(".opblock-summary-control").count() > 3
    page.locator("header a", has_text="Code Completion Arena").click()
    page.wait_for_url(live_server.url + "/")
