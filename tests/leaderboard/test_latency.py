"""Served latency per model on the board, the model page and the API (median and p90)."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from catalogue.models import ArenaModel
from ingest.models import CompletionLog, Privacy
from leaderboard.latency import served_latency
from leaderboard.recompute import recompute

FAST = [120.0, 180.0, 200.0, 240.0, 310.0, 330.0, 400.0, 950.0]


def _logs(model: ArenaModel, values: list[float], **fields) -> None:
    n = CompletionLog.objects.count()
    CompletionLog.objects.bulk_create(
        CompletionLog(
            completion_id=f"lat-{n + i}",
            model=model,
            latency_ms=v,
            privacy=Privacy.PRIVATE,
            **fields,
        )
        for i, v in enumerate(values)
    )


@pytest.fixture
def logged(simulated, settings):
    settings.ARENA_LATENCY_MIN_SAMPLES = 5
    codestral = ArenaModel.objects.get(key="codestral-2405")
    _logs(codestral, FAST)
    _logs(codestral, [99_000.0] * 3, succeeded=False)  # failures do not count
    _logs(codestral, [50_000.0] * 3, received_at=timezone.now() - timedelta(days=400))  # too old
    few = ArenaModel.objects.exclude(pk=codestral.pk).filter(visibility="public").first()
    _logs(few, [500.0] * 4)  # below the minimum: no figure
    return codestral, few


@pytest.mark.parametrize("vendor", ["postgresql", "sqlite"])
def test_percentiles_of_recent_successful_completions(logged, vendor, monkeypatch):
    codestral, few = logged
    if vendor == "sqlite":  # the embedded path, computed in Python: the same numbers
        monkeypatch.setattr(connection, "vendor", "sqlite")
    found = served_latency()
    p50, p90 = np.percentile(FAST, [50, 90])
    assert found[codestral.pk].p50_ms == pytest.approx(p50)
    assert found[codestral.pk].p90_ms == pytest.approx(p90)
    assert found[codestral.pk].samples == len(FAST)
    assert few.pk not in found


def test_board_model_page_and_api_show_it(client, logged):
    _, few = logged
    recompute(trigger="test")
    rows = {m["model"]: m for m in client.get("/api/v1/leaderboard").json()["models"]}
    assert rows["codestral-2405"]["latency_p50_ms"] == pytest.approx(np.median(FAST))
    assert rows[few.key]["latency_p50_ms"] is None
    html = client.get("/").content.decode()
    assert 'data-sort="latency"' in html and f"{np.median(FAST):,.0f} ms" in html
    page = client.get("/models/codestral-2405/").content.decode()
    assert "Served latency" in page and f"{len(FAST)} completions" in page
    sorted_rows = client.get("/", {"sort": "latency", "dir": "asc"}).content.decode()
    table = sorted_rows.split('id="board"', 1)[1]
    assert table.index("/models/codestral-2405/") < table.index(f"/models/{few.key}/")


def test_the_board_plots_rating_against_latency(client, logged):
    _, few = logged
    _logs(few, [500.0] * 2)  # now 6: enough
    recompute(trigger="test")
    html = client.get("/").content.decode()
    assert 'id="chart-latency"' in html and "Rating against median served latency" in html
