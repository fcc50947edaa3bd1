"""The "ignored pairs counted as both bad" board (leaderboard/ignored_board.py): page and API."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest

from analysis.grouping import OUTCOME_TIE, GroupedCounts
from analysis.leaderboard import compute_leaderboard
from leaderboard import ignored_pairs, selectors
from leaderboard.ignored_board import ignored_board
from leaderboard.recompute import recompute

from .test_ignored_pairs import arena  # noqa: F401  (the fixture)


def ignored_by_pair(published, pairs, window: int) -> dict[tuple[str, str], int]:
    """Ignored pairs per (top, bottom) model, counted one by one from the fixture's list."""
    out: dict[tuple[str, str], int] = {}
    for top, bottom, at, delay in pairs:
        top, bottom = (k.replace("bee-old", "bee") for k in (top, bottom))
        if top == bottom or at + dt.timedelta(minutes=window) > published:
            continue
        if delay is None or delay > window:
            out[(top, bottom)] = out.get((top, bottom), 0) + 1
    return out


@pytest.fixture
def board(arena, fast_config, settings):  # noqa: F811
    settings.ARENA_IGNORED_WINDOW_MINUTES = 60
    _, pairs = arena
    snap = recompute(trigger="test")
    return snap, pairs


def test_ignored_pairs_join_the_votes_as_ties(board):
    snap, pairs = board
    published = selectors.snapshot_published_at(snapshot_id=snap.pk)
    plain = selectors.overall_counts(snapshot_id=snap.pk)
    extra = ignored_by_pair(published, pairs, 60)
    assert sum(extra.values()) > 20
    idx = {k: i for i, k in enumerate(plain.models)}
    a = [idx[t] for t, _ in extra]
    b = [idx[u] for _, u in extra]
    by_hand = GroupedCounts(
        models=plain.models,
        a=np.concatenate([plain.a, a]),
        b=np.concatenate([plain.b, b]),
        outcome=np.concatenate([plain.outcome, np.full(len(a), OUTCOME_TIE)]),
        count=np.concatenate([plain.count, list(extra.values())]),
    )
    expected = compute_leaderboard(by_hand, method="sandwich", shown=list(plain.models))
    variant = ignored_board(snapshot_id=snap.pk)
    assert variant.ignored == sum(extra.values())
    for i, key in enumerate(plain.models):
        rating, lower, upper, rank = variant.rows[key]
        assert rating == pytest.approx(expected.rating[i], abs=1e-6)
        assert lower == pytest.approx(expected.ci_lower[i], abs=1e-6)
        assert upper == pytest.approx(expected.ci_upper[i], abs=1e-6)
        assert rank is not None and rank >= 1
    # Ties pull the models of each pair together: the spread shrinks.
    plain_fit = compute_leaderboard(plain, method="sandwich", shown=list(plain.models))
    assert np.ptp(expected.rating) < np.ptp(plain_fit.rating)


def test_page_shows_the_variant_beside_the_plain_ranks(board, client):
    html = client.get("/").content.decode()
    assert 'href="?view=ignored"' in html
    page = client.get("/?view=ignored")
    html = page.content.decode()
    assert page.status_code == 200
    assert 'id="ignored-summary"' in html and "Rating with ignored" in html
    assert "Plain rank" in html
    unknown = client.get("/?view=bogus").content.decode()
    assert "takes plain, controlled or ignored" in unknown


def test_api_carries_ignored_rates_and_the_variant(board, client):
    snap, _ = board
    summary = ignored_pairs.ignored_summary(snapshot_id=snap.pk)
    plain = json.loads(client.get("/api/v1/leaderboard").content)
    rows = {r["model"]: r for r in plain["models"]}
    for key in ("ant", "bee", "cat"):
        assert rows[key]["ignored_pairs"] == json.loads(json.dumps(summary.model(key)))
    variant = json.loads(client.get("/api/v1/leaderboard?view=ignored").content)
    assert variant["snapshot"]["view"] == "ignored"
    assert "both bad" in variant["snapshot"]["view_label"]
    vrows = {r["model"]: r for r in variant["models"]}
    assert all(vrows[k]["plain_rating"] == rows[k]["rating"] for k in rows)
    assert any(abs(vrows[k]["rating"] - rows[k]["rating"]) > 0.01 for k in rows)
    csv = client.get("/api/v1/leaderboard?view=ignored&format=csv").content.decode()
    assert "plain_rating" in csv.splitlines()[0]
    for wrong in ("bogus", ""):
        bad = client.get(f"/api/v1/leaderboard?view={wrong}")
        assert bad.status_code == 400 and "view" in bad.json()["fields"]
    other = client.get("/api/v1/leaderboard?category=kind:completion&view=ignored")
    assert other.status_code == 400 and "view" in other.json()["fields"]
