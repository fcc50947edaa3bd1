"""Compare two models: head-to-head battles, observed rate with a Wilson interval, prediction."""

from __future__ import annotations

import re

import pytest

from leaderboard import compare, selectors
from leaderboard.recompute import recompute


def test_wilson_interval_known_values():
    lo, hi = compare.wilson_interval(successes=5, n=10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    lo, hi = compare.wilson_interval(successes=0, n=20)
    assert lo == 0.0 and 0.15 < hi < 0.17


def test_predicted_win_rate_on_the_400_point_scale():
    assert compare.predicted_win_rate(rating_a=1400, rating_b=1000) == pytest.approx(10 / 11)
    assert compare.predicted_win_rate(rating_a=1000, rating_b=1000) == 0.5


def test_head_to_head_matches_the_board(simulated):
    recompute(trigger="test")
    r = compare.head_to_head(a="deepseek-coder-fim", b="codestral-2405")
    board = selectors.board()
    keys = [m["model"] for m in board["models"]]
    i, j = keys.index("deepseek-coder-fim"), keys.index("codestral-2405")
    assert r["battles"] == board["matrices"]["battle_count"][i][j] > 0
    assert r["observed"] == pytest.approx(board["matrices"]["win_fraction"][i][j], abs=1e-4)
    assert r["predicted"] == pytest.approx(board["matrices"]["predicted_win_rate"][i][j], abs=1e-4)
    assert r["observed_lower"] < r["observed"] < r["observed_upper"]
    swapped = compare.head_to_head(a="codestral-2405", b="deepseek-coder-fim")
    assert swapped["wins"] == r["losses"] and swapped["ties"] == r["ties"]


def test_compare_page(client, simulated):
    recompute(trigger="test")
    r = client.get("/compare/", {"a": "deepseek-coder-fim", "b": "codestral-2405"})
    html = r.content.decode()
    assert r.status_code == 200
    assert re.search(r"<strong>[0-9,]+</strong> head-to-head battles", html)
    assert "95% Wilson interval" in html and "Predicted from the ratings" in html
    assert '<select name="a" id="compare-a">' in html  # the form, usable without JS
    assert 'id="compare-link"' in client.get("/models/codestral-2405/").content.decode()


def test_compare_unknown_and_same_model(client, simulated):
    recompute(trigger="test")
    r = client.get("/compare/", {"a": "nope", "b": "codestral-2405"})
    assert r.status_code == 404 and "Not on the current board: nope" in r.content.decode()
    r = client.get("/compare/", {"a": "codestral-2405", "b": "codestral-2405"})
    assert r.status_code == 400 and "Choose two different models" in r.content.decode()
    assert client.get("/compare/").status_code == 200
