"""The slices, correlations and external-scores pages in a real browser: tables present,
every chart drawn, the controls work, no console errors."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from external import tasks as external_tasks
from external.services import compute_correlations, import_demo_scores, seed_external_aliases
from leaderboard.models import RatingConfig
from leaderboard.recompute import recompute

from .helpers import charts_rendered

pytestmark = pytest.mark.integration


@pytest.fixture
def analysed(transactional_db, monkeypatch):
    config = RatingConfig.current()
    config.rounds, config.slice_rounds = 100, 50
    config.save()
    call_command("simulate_battles", "--battles", "5000", "--seed", "11", stdout=io.StringIO())
    seed_external_aliases()
    import_demo_scores()
    # No worker here: compute the correlations in this process instead of queueing them.
    monkeypatch.setattr(external_tasks.compute_correlations_task, "delay", lambda **kw: None)
    snapshot = recompute(trigger="test")
    compute_correlations(snapshot_id=snapshot.pk)
    return snapshot


def test_navigation_reaches_the_new_pages(live_server, analysed, page):
    page.goto(live_server.url + "/")
    page.click("nav >> text=Slices")
    page.wait_for_url("**/slices/")
    page.click("nav >> text=Correlations")
    page.wait_for_url("**/correlations/")
    assert page.console_errors == [] and page.dialogs == []


def test_slices_page(live_server, analysed, page):
    page.goto(live_server.url + "/slices/")
    assert page.locator("#slice-table tbody tr").count() == 11
    assert page.locator("#slice-values tbody tr").count() >= 5
    assert "χ² =" in page.locator("#slice-test").inner_text()
    total, drawn = charts_rendered(page)
    assert total == 3 and drawn >= total  # ratings and win-rate heatmaps, Kendall tau
    page.select_option("#dimension", "context_bucket")
    page.wait_for_url("**dimension=context_bucket")
    # A small board's header also says "(small sample)"; the names and their order are checked.
    headers = [
        h.replace(" (small sample)", "")
        for h in page.locator("#slice-table thead th").all_inner_texts()
    ]
    assert headers[2:] == [
        "Under 1k tokens",
        "1k\u20134k tokens",
        "4k\u201316k tokens",
        "Over 16k tokens",
    ]
    total, drawn = charts_rendered(page)
    assert total == 3 and drawn >= total
    assert page.console_errors == [] and page.dialogs == []


def test_correlations_page(live_server, analysed, page):
    page.goto(live_server.url + "/correlations/")
    assert page.locator("#published").inner_text().count("0.62") == 1
    rows = page.locator("#correlations tbody tr")
    assert rows.count() == 14  # every demo board against the overall board
    assert rows.first.inner_text().startswith("Chatbot Arena")  # human preference first
    # DeepSeek V2.5 (four spellings, one note) and Codestral-22B-v0.1.
    notes = page.locator("#caveats li").all_inner_texts()
    assert len(notes) == 2
    deepseek = next(n for n in notes if "→ deepseek-coder-fim" in n)
    assert deepseek.startswith(
        "Deepseek-v2.5, DeepSeek-V2.5, DeepSeek-V2.5 (Nov 2024), deepseek-v2.5"
    )
    total, drawn = charts_rendered(page)
    assert total == 6 and drawn >= total  # a scatter per source, Spearman per slice
    # Each scatter labels its points with the models' names.
    arena = page.locator("figure.chart").filter(has_text="Chatbot Arena overall").first
    labels = arena.locator("g.textpoint text").evaluate_all("els => els.map(e => e.textContent)")
    assert len(labels) == 9 and "GPT-4o mini (July 2024)" in labels
    # The menu of a source with several boards switches the plotted board.
    bigcode = page.locator("figure.chart").filter(has_text="BigCodeBench").first
    before = bigcode.locator(".gtitle").text_content()
    bigcode.locator(".updatemenu-header").click()
    bigcode.locator(".updatemenu-dropdown-button").nth(2).click()
    page.wait_for_function(
        "(before) => [...document.querySelectorAll('figure.chart .gtitle')]"
        ".some(t => t.textContent.includes('BigCodeBench') && t.textContent !== before)",
        arg=before,
    )
    page.select_option("#slice", index=1)
    page.wait_for_url("**slice=task_type*")
    total, drawn = charts_rendered(page)
    assert drawn >= total >= 5
    assert page.console_errors == [] and page.dialogs == []


def test_external_scores_page(live_server, analysed, page):
    page.goto(live_server.url + "/external/")
    assert page.locator("#boards tbody tr").count() == 14
    assert page.locator("#scores tbody tr").count() == 11
    assert page.console_errors == [] and page.dialogs == []
