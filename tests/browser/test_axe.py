"""axe-core (the copy that the axe-playwright-python package ships) on every public page at
390 and 1400 px, after the charts are drawn; the API docs as loaded, with every operation
open, and with every operation's "Try it out" form: no violation of impact serious or
critical."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe
from rest_framework.test import APIClient

from catalogue.models import ArenaModel
from contributors.services import register
from leaderboard.selectors import board
from tests.ingest.payloads import completion_item

from .helpers import DEADLINE_MS, charts_rendered

pytestmark = pytest.mark.integration

PAGES = [
    "/",
    "/?category=task_type:backend",
    "/models/deepseek-coder-fim/",
    "/slices/",
    "/compare/",
    "/compare/?a=deepseek-coder-fim&b=codestral-2405",
    "/methodology/",
    "/correlations/",
    "/external/",
    "/contributors/",
    "/contributors/ada/",
    "/data/",
    "/take-part/",
    "/api/docs/",
]
BLOCKING = ("serious", "critical")


@pytest.fixture
def site(site):
    """The shared site, plus a contributor with a personal board and a provisional model."""
    # A contributor with a personal board, its chart, and a model below the board's minimum.
    ArenaModel.objects.create(key="brand-new-model", display_name="Brand New Model")
    keys = [m["model"] for m in board()["models"]][:3]
    api = APIClient()
    for i in range(24):
        top, bottom = ("brand-new-model", keys[i % 3]) if i % 2 else (keys[i % 3], keys[i % 3 - 1])
        body = {
            "pairId": f"axe-{i}",
            "userId": "axe-user",
            "completionItems": [completion_item(0, top), completion_item(1, bottom)],
            "acceptedIndex": i % 3 % 2,
            "version": "1.2.7",
            "privacy": "Private",
            "fileType": "python",
        }
        r = api.put("/add_completion_outcome", data=body, format="json")
        assert r.status_code == 200, r.content
    register(user_id="axe-user", username="ada", password=None, metadata=None)


def settle(page, path: str) -> None:
    """Wait for what scripts add: the charts, and Swagger UI's rendering of the schema."""
    if path.startswith("/api/docs/"):
        page.wait_for_selector(".opblock-summary-control", timeout=DEADLINE_MS)
    else:
        charts_rendered(page)
    page.evaluate("() => window.scrollTo(0, 0)")


def describe(path: str, violation: dict) -> str:
    nodes = "; ".join(
        f"{' '.join(map(str, n['target']))}: {n.get('failureSummary', '').splitlines()[-1:]}"
        for n in violation["nodes"][:6]
    )
    more = len(violation["nodes"]) - 6
    return (
        f"{path} [{violation['impact']}] {violation['id']} ({violation['help']}) "
        f"{len(violation['nodes'])} node(s): {nodes}{f' …and {more} more' if more > 0 else ''}"
    )


@pytest.mark.parametrize("width", [390, 1400])
def test_no_serious_or_critical_axe_violation(live_server, site, browser, width):
    axe = Axe()
    context = browser.new_context(viewport={"width": width, "height": 844})
    blocking: list[str] = []
    by_impact: dict[str, int] = {}
    seen: list[str] = []
    for path in PAGES:
        page = context.new_page()
        assert page.goto(live_server.url + path).status == 200, path
        settle(page, path)
        if path == "/contributors/ada/":  # the page with both of its tables
            assert page.locator("#personal-board, #personal-provisional").count() == 2
        states = [(path, axe.run(page))]
        if path.startswith("/api/docs/"):
            # Swagger UI draws an operation's parameters, examples and responses only once it
            # is opened, and its form controls on "Try it out".
            controls = page.locator(".opblock-summary-control")
            for i in range(controls.count()):
                controls.nth(i).click()
            bodies = page.locator(".opblock-body .responses-wrapper")
            bodies.nth(controls.count() - 1).wait_for(timeout=DEADLINE_MS)
            states.append((f"{path} (every operation open)", axe.run(page)))
            buttons = page.locator("button.try-out__btn:not(.cancel)")
            for _ in range(buttons.count()):
                buttons.first.click()
            page.locator("button.execute").nth(controls.count() - 1).wait_for(timeout=DEADLINE_MS)
            states.append((f"{path} (every operation tried out)", axe.run(page)))
        for name, results in states:
            for v in results.response["violations"]:
                by_impact[v["impact"]] = by_impact.get(v["impact"], 0) + 1
                seen.append(f"{name} {v['impact']} {v['id']} ({len(v['nodes'])})")
                if v["impact"] in BLOCKING:
                    blocking.append(describe(name, v))
        page.close()
    context.close()
    # Every impact, blocking or not, for the record in docs/performance.md (pytest -s).
    print(f"axe at {width} px on {len(PAGES)} pages: violations by impact {by_impact}")
    print(*seen, sep="\n")
    assert blocking == [], "\n".join(blocking)
