"""Shared steps of the browser tests: drawing every chart, reading the document width."""

from __future__ import annotations

from typing import Any

DEADLINE_MS = 30_000


def charts_rendered(page: Any) -> tuple[int, int]:
    """Bring every chart into view (they are drawn on approach), wait until all are drawn.

    Returns (charts on the page, charts with a plotly SVG).
    """
    figures = page.locator("figure.chart")
    total = figures.count()
    for i in range(total):
        figures.nth(i).scroll_into_view_if_needed()
    page.wait_for_function(
        "() => [...document.querySelectorAll('figure.chart')].every(f => f.dataset.rendered === 'true')",
        timeout=DEADLINE_MS,
    )
    drawn = page.locator("figure.chart .main-svg").count()
    return total, drawn


def overflow(page: Any) -> int:
    """How many CSS pixels the document is wider than the viewport (0 when it fits)."""
    return page.evaluate(
        "() => Math.max(0, document.documentElement.scrollWidth - window.innerWidth)"
    )
