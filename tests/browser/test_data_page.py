"""/data/ in a real Chromium on a phone (390 px) and a desktop (1400 px): a release is listed
with its files, checksums and board, nothing is wider than the viewport, no console errors."""

from __future__ import annotations

import pytest

from tests.releases.helpers import post, release

from .helpers import overflow

pytestmark = pytest.mark.integration


@pytest.fixture
def made(transactional_db, release_dir, models, keyed_api):
    for n in range(80):
        post(keyed_api, n, user=f"dev-{n % 7}", prefix=f"def f{n}():\n    return {n}\n")
    return release(license="cc-by-4.0")


@pytest.mark.parametrize("width", [390, 1400])
def test_data_page_lists_the_release_at_phone_and_desktop_widths(live_server, made, browser, width):
    context = browser.new_context(viewport={"width": width, "height": 844})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    response = page.goto(live_server.url + "/data/")
    assert response.status == 200
    section = page.locator(f"#release-{made.version}")
    assert section.locator("h2").inner_text() == f"Release {made.version}"
    assert "80 battles" in section.inner_text()
    links = section.locator("table.files a")
    assert links.count() == 6
    assert links.first.get_attribute("href") == f"/data/files/{made.version}/battles.parquet"
    assert made.file("battles.parquet")["sha256"] in section.inner_text()
    section.locator("details summary").click()
    assert section.locator("details table tbody tr").count() == len(made.board["models"]) > 0
    assert overflow(page) == 0
    # The checksums wrap inside the viewport (or scroll inside their own box), never the page.
    box = section.locator(".table-scroll").first
    assert box.evaluate("el => el.getBoundingClientRect().right") <= width
    # Linked from the footer and from "Take part".
    assert page.locator("footer a[href='/data/']").count() == 1
    page.goto(live_server.url + "/take-part/")
    page.locator("main a[href='/data/']").first.click()
    page.wait_for_url(live_server.url + "/data/")
    assert errors == []
    context.close()
