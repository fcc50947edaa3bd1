"""A real headless Chromium (Debian's package) driven by Playwright, against live_server."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser():
    if not shutil.which(CHROMIUM):
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: install the Debian package 'chromium' (.ci/run does)."
        )
    # Playwright's sync API runs an event loop; Django must allow ORM calls from this thread.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    pg = context.new_page()
    pg.console_errors = []
    pg.on("console", lambda msg: msg.type == "error" and pg.console_errors.append(msg.text))
    pg.on("pageerror", lambda exc: pg.console_errors.append(str(exc)))
    pg.dialogs = []

    def on_dialog(dialog):
        pg.dialogs.append(dialog.message)
        dialog.dismiss()

    pg.on("dialog", on_dialog)
    yield pg
    context.close()


@pytest.fixture
def site(transactional_db, monkeypatch):
    """A simulated arena's published board with external scores and correlations."""
    import io

    from django.core.management import call_command

    from external import tasks as external_tasks
    from external.services import compute_correlations, import_demo_scores, seed_external_aliases
    from leaderboard.models import RatingConfig
    from leaderboard.recompute import recompute

    config = RatingConfig.current()
    config.rounds, config.slice_rounds = 50, 30
    config.save()
    call_command("simulate_battles", "--battles", "4000", "--seed", "5", stdout=io.StringIO())
    seed_external_aliases()
    import_demo_scores()
    # No worker here: the correlations are computed in this process instead of queued.
    monkeypatch.setattr(external_tasks.compute_correlations_task, "delay", lambda **kw: None)
    snapshot = recompute(trigger="test")
    compute_correlations(snapshot_id=snapshot.pk)
    return snapshot
