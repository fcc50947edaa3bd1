"""The board's own script: sort by any column, search by name, filter by organisation and
licence, the view kept in the URL; tiers shaded while in rank order."""

from __future__ import annotations

import io
import itertools

import pytest
from django.core.management import call_command

from leaderboard.models import RatingConfig
from leaderboard.recompute import recompute

pytestmark = pytest.mark.integration


@pytest.fixture
def board(transactional_db):
    config = RatingConfig.current()
    config.rounds, config.slice_rounds = 50, 30
    config.save()
    call_command("simulate_battles", "--battles", "4000", "--seed", "3", stdout=io.StringIO())
    recompute(trigger="test")


def column(page, index: int) -> list[str]:
    return page.locator(f"#board tbody tr:visible > :nth-child({index})").all_inner_texts()


def numbers(texts: list[str]) -> list[float]:
    return [float(t.split()[0].replace(",", "")) for t in texts]


def test_sorting_by_headers(live_server, board, page):
    page.goto(live_server.url + "/")
    assert page.locator("#board th[data-sort=rank]").get_attribute("aria-sort") == "ascending"
    ranks = numbers(column(page, 1))
    assert ranks == sorted(ranks)
    votes_header = page.locator("#board th[data-sort=votes]")
    votes_header.locator("button").click()
    assert votes_header.get_attribute("aria-sort") == "descending"
    assert page.locator("#board th[aria-sort]").count() == 1
    votes = numbers(column(page, 5))
    assert votes == sorted(votes, reverse=True) and len(set(votes)) > 1
    votes_header.locator("button").click()
    assert votes_header.get_attribute("aria-sort") == "ascending"
    assert numbers(column(page, 5)) == sorted(votes)
    assert "sort=votes" in page.url and "dir=asc" in page.url
    # Out of rank order the tier shading is switched off.
    assert "unranked-order" in (page.locator("#board").get_attribute("class") or "")
    page.locator("#board th[data-sort=model] button").click()
    names = [n.lower() for n in column(page, 2)]
    assert names == sorted(names)
    # Keyboard: the header buttons are reachable and work with Enter.
    page.locator("#board th[data-sort=rating] button").focus()
    page.keyboard.press("Enter")
    ratings = numbers(column(page, 3))
    assert ratings == sorted(ratings, reverse=True)
    assert page.console_errors == []


def test_search_and_filters(live_server, board, page):
    page.goto(live_server.url + "/")
    total = page.locator("#board tbody tr").count()
    page.fill("#board-q", "gpt")
    names = column(page, 2)
    assert names and all("gpt" in n.lower() for n in names) and len(names) < total
    assert "of" in page.locator("form.board-tools output").inner_text()
    assert "q=gpt" in page.url
    page.fill("#board-q", "")
    page.select_option("#board-org", "Meta")
    visible = page.locator("#board tbody tr:visible")
    assert visible.count() >= 1
    assert all(o == "Meta" for o in visible.evaluate_all("rs => rs.map(r => r.dataset.org)"))
    page.select_option("#board-org", "")
    page.select_option("#board-open", "1")
    licences = page.locator("#board tbody tr:visible").evaluate_all(
        "rs => rs.map(r => r.cells[r.cells.length - 1].textContent.trim())"
    )
    assert licences and "Proprietary" not in licences
    page.select_option("#board-open", "0")
    licences = page.locator("#board tbody tr:visible").evaluate_all(
        "rs => rs.map(r => r.cells[r.cells.length - 1].textContent.trim())"
    )
    assert licences and set(licences) == {"Proprietary"}
    page.fill("#board-q", "no model is called this")
    assert page.locator("#board tbody tr:visible").count() == 0
    assert page.locator(".no-match").is_visible()
    assert page.console_errors == []


def test_view_from_the_url(live_server, board, page):
    page.goto(live_server.url + "/?sort=votes&dir=asc&q=gemini")
    assert page.input_value("#board-q") == "gemini"
    names = column(page, 2)
    assert names and all("gemini" in n.lower() for n in names)
    votes = numbers(column(page, 5))
    assert votes == sorted(votes)
    assert page.locator("#board th[data-sort=votes]").get_attribute("aria-sort") == "ascending"
    assert page.console_errors == []


def test_tiers_are_shaded(live_server, board, page):
    page.goto(live_server.url + "/")
    rows = page.locator("#board tbody tr").evaluate_all(
        "rs => rs.map(r => [r.cells[0].textContent.trim(), r.className])"
    )
    # Rows sharing a rank share a shade; the shade alternates between ranks.
    for (rank_a, tier_a), (rank_b, tier_b) in itertools.pairwise(rows):
        assert (rank_a == rank_b) == (tier_a == tier_b)
