"""Every public page on a phone (390 px) and a desktop (1400 px): nothing wider than the
viewport, no console errors, every chart drawn with visible content; without JavaScript
every chart area still says what it holds; the API docs fetch nothing from the internet."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from .helpers import charts_rendered, overflow

pytestmark = pytest.mark.integration

PAGES = [
    "/",
    "/?category=task_type:backend",
    "/models/deepseek-coder-fim/",
    "/slices/",
    "/slices/?dimension=language",
    "/correlations/",
    "/external/",
    "/methodology/",
    "/take-part/",
    "/compare/?a=deepseek-coder-fim&b=codestral-2405",
]


def chart_content(page) -> list[str]:
    """Charts whose drawing has no visible size or no marks (points, bars, heatmap cells)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('figure.chart')].filter(f => {
            const svg = f.querySelector('.main-svg');
            const box = svg && svg.getBoundingClientRect();
            const marks = f.querySelectorAll('.point, .bars path, .hm image, .heatmaplayer image, g.textpoint').length;
            return !box || box.width < 150 || box.height < 150 || marks === 0;
        }).map(f => f.id)"""
    )


@pytest.mark.parametrize("width", [390, 1400])
def test_every_public_page_fits_and_draws(live_server, site, browser, width):
    context = browser.new_context(viewport={"width": width, "height": 844})
    problems: list[str] = []
    for path in PAGES:
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m, errors=errors: m.type == "error" and errors.append(m.text))
        page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
        response = page.goto(live_server.url + path)
        if response.status != 200:
            problems.append(f"{path}: HTTP {response.status}")
        total, drawn = charts_rendered(page)
        if drawn < total:
            problems.append(f"{path}: {drawn} of {total} charts drawn")
        if empty := chart_content(page):
            problems.append(f"{path}: charts without visible content {empty}")
        page.evaluate("() => window.scrollTo(0, 0)")
        if extra := overflow(page):
            problems.append(f"{path}: document {extra} px wider than the {width} px viewport")
        if errors:
            problems.append(f"{path}: console errors {errors}")
        if not page.locator("meta[name=viewport]").count():
            problems.append(f"{path}: no <meta viewport>")
        page.close()
    context.close()
    assert problems == []


def test_phone_layout_keeps_names_readable(live_server, site, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(live_server.url + "/")
    # Secondary columns collapse; the interval moves under the rating.
    assert page.locator("#board th.col-secondary").first.is_hidden()
    assert page.locator("#board .ci-inline").first.is_visible()
    charts_rendered(page)
    # Category charts turn horizontal: every model name is a tick label, none dropped.
    names = page.locator("#chart-intervals .ytick text").all_inner_texts()
    assert len(names) == page.locator("#board tbody tr").count()
    # A heatmap keeps readable cells and scrolls inside its own box, not the page.
    wrap = page.locator("#chart-win-fraction .plot-wrap")
    assert wrap.evaluate("el => el.scrollWidth > el.clientWidth")
    assert wrap.get_attribute("tabindex") == "0"
    # Scrolled to its far end, its row names are still in view: a copy over the box's edge.
    wrap.evaluate("el => { el.scrollLeft = el.scrollWidth; }")
    rows = page.evaluate(
        """() => {
            const f = document.querySelector('#chart-win-fraction');
            const box = f.querySelector('.plot-wrap').getBoundingClientRect();
            const seen = el => { const r = el.getBoundingClientRect();
                return r.width > 0 && r.left >= box.left - 1 && r.right <= box.right + 1; };
            const ticks = [...f.querySelectorAll('.ytick text')];
            return {names: ticks.map(t => t.textContent), plotNamesSeen: ticks.filter(seen).length,
                    kept: [...f.querySelectorAll('.row-labels span')].filter(seen).map(s => s.textContent)};
        }"""
    )
    assert len(rows["names"]) == page.locator("#board tbody tr").count()
    assert rows["plotNamesSeen"] == 0 and rows["kept"] == rows["names"]
    # No toolbar over the titles on a phone.
    assert page.locator("#chart-intervals .modebar").count() == 0
    context.close()


def test_compare_slice_tables_scroll_in_their_own_boxes_on_a_phone(live_server, site, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(live_server.url + "/compare/?a=deepseek-coder-fim&b=codestral-2405")
    tables = page.locator("#compare-task_type, #compare-language, #compare-context_bucket")
    assert tables.count() >= 2  # the simulated battles fill at least two dimensions
    for i in range(tables.count()):
        box = tables.nth(i).locator("xpath=..")
        assert "table-scroll" in box.get_attribute("class").split()
        assert box.get_attribute("tabindex") == "0"
        assert box.evaluate("el => el.getBoundingClientRect().right") <= 390
    assert overflow(page) == 0
    context.close()


def test_without_javascript_every_chart_area_has_its_numbers(live_server, site, browser):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 844})
    page = context.new_page()
    for path in ("/", "/models/deepseek-coder-fim/", "/slices/", "/correlations/"):
        page.goto(live_server.url + path)
        figures = page.locator("figure.chart")
        assert figures.count() > 0
        for i in range(figures.count()):
            fig = figures.nth(i)
            assert fig.locator("figcaption").inner_text().strip(), path
            assert "drawn by JavaScript" in fig.inner_text(), path
            assert fig.locator("table tbody tr").count() >= 1, path
        assert overflow(page) == 0, path
    # The win-fraction table: one row and one column per model.
    page.goto(live_server.url + "/")
    rows = page.locator("#chart-win-fraction noscript table tbody tr")
    assert rows.count() == page.locator("#board tbody tr").count()
    context.close()


def test_not_found_page_is_styled(live_server, site, page):
    response = page.goto(live_server.url + "/no-such-page/")
    assert response.status == 404
    assert page.locator("h1").inner_text() == "Page not found"
    assert page.locator("nav a", has_text="Leaderboard").count() >= 1
    response = page.goto(live_server.url + "/models/no-such-model/")
    assert response.status == 404
    assert "No public model with this key" in page.locator("main").inner_text()


@pytest.mark.parametrize("path", ["/api/redoc/", "/api/docs/"])
def test_api_docs_load_nothing_from_the_internet(live_server, site, page, path):
    outside: list[str] = []

    def check(route):
        host = urlsplit(route.request.url).hostname
        if route.request.url.startswith(("data:", "blob:")) or host in {"127.0.0.1", "localhost"}:
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", check)
    page.goto(live_server.url + path)
    page.wait_for_function(
        "() => document.body.innerText.includes('Code Completion Arena API')", timeout=30_000
    )
    assert outside == []


def test_server_error_page_needs_no_context(rf):
    from django.views.defaults import server_error

    response = server_error(rf.get("/"))
    assert response.status_code == 500
    assert b"Something went wrong" in response.content and b"arena.css" in response.content
