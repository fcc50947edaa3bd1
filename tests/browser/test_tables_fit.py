"""Every table at 390 and 1400 px either fits its box, or says it scrolls (a visible cue) and
keeps its first column and its header in view; the board's headers sort without JavaScript;
the rank header's sort arrow stays in its own (sticky) cell; `/external/` reads on a phone."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration

PAGES = [
    "/",
    "/?view=controlled",
    "/?view=ignored",
    "/?category=task_type:backend",
    "/models/deepseek-coder-fim/",
    "/slices/",
    "/slices/?dimension=language",
    "/correlations/",
    "/external/",
    "/compare/?a=deepseek-coder-fim&b=codestral-2405",
    "/contributors/",
]

# Tables that are rendered and wider than their scroll box, or (outside a box) wider than the
# page; for those in a box, whether a cue is visible and the first column and header stick.
CLIPPED = """() => [...document.querySelectorAll('main table')].filter(t => t.offsetParent !== null
    && t.getBoundingClientRect().width > 2).map(t => {
  const box = t.closest('.table-scroll');
  const sticky = el => !el || getComputedStyle(el).position === 'sticky';
  if (!box) {
    return {id: t.id, boxed: false, clipped: t.getBoundingClientRect().right > window.innerWidth + 1};
  }
  const clipped = box.scrollWidth > box.clientWidth + 1;
  const cue = box.previousElementSibling;
  const first = t.querySelector('tbody tr > :first-child');
  const head = t.querySelector('thead th:last-child');
  return {id: t.id || box.getAttribute('aria-label'), boxed: true, clipped,
          cue: !!(cue && cue.classList.contains('scroll-cue') && cue.offsetParent !== null),
          firstSticky: sticky(first), headSticky: sticky(head)};
})"""


@pytest.mark.parametrize("width", [390, 1400])
def test_no_table_is_clipped_without_a_cue(live_server, site, browser, width):
    context = browser.new_context(viewport={"width": width, "height": 844})
    problems, scrolling = [], 0
    for path in PAGES:
        page = context.new_page()
        assert page.goto(live_server.url + path).status == 200, path
        for t in page.evaluate(CLIPPED):
            if not t["boxed"]:
                if t["clipped"]:
                    problems.append(f"{path} {t['id']}: wider than the page, not in a scroll box")
                continue
            if not t["clipped"]:
                continue
            scrolling += 1
            if not (t["cue"] and t["firstSticky"] and t["headSticky"]):
                problems.append(f"{path} {t['id']}: {t}")
        page.close()
    context.close()
    assert problems == []
    assert scrolling > 0  # the check above ran on at least one wide table


@pytest.mark.parametrize("width", [390, 1400])
def test_rank_sort_arrow_stays_in_the_rank_cell(live_server, site, browser, width):
    context = browser.new_context(viewport={"width": width, "height": 844})
    page = context.new_page()
    for path in ("/", "/?view=controlled"):
        page.goto(live_server.url + path)
        rank = page.locator("#board thead th").nth(0)
        # The header's content (text and arrow) ends inside the cell's own box.
        inner = rank.locator("button.sort").evaluate("el => el.getBoundingClientRect().right")
        cell = rank.evaluate("el => el.getBoundingClientRect().right")
        assert inner <= cell + 0.5, path
        assert rank.evaluate("el => el.scrollWidth <= el.clientWidth"), path
    context.close()


def test_headers_sort_without_javascript(live_server, site, browser):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(live_server.url + "/?category=task_type:backend")
    page.locator("#board thead a.sort-link", has_text="Votes").click()
    assert "sort=votes" in page.url and "category=task_type%3Abackend" in page.url
    shown = page.evaluate(
        """() => {
          const i = [...document.querySelectorAll('#board thead th')]
            .findIndex(th => th.textContent.trim().startsWith('Votes'));
          return [...document.querySelectorAll('#board tbody tr')].map(r => Number(r.cells[i].dataset.v));
        }"""
    )
    assert len(shown) > 1
    assert shown == sorted(shown, reverse=True)
    # Clicking the sorted column again reverses it.
    page.locator("#board thead a.sort-link", has_text="Votes").click()
    assert "dir=asc" in page.url
    context.close()


def test_external_scores_read_per_model_on_a_phone(live_server, site, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(live_server.url + "/external/")
    assert page.locator("#scores").is_hidden()
    entries = page.locator("#scores-by-model details")
    assert entries.count() >= 5
    entries.first.locator("summary").click()
    assert entries.first.locator("dt").count() == page.locator("#scores thead th").count() - 2
    context.close()
