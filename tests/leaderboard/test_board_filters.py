"""The board's search, filters and sort work from the query string (no JavaScript); slice names
are what people read (C#, Data/ML, context buckets by size)."""

from __future__ import annotations

import re

from leaderboard.board_filters import apply_filters, openness
from leaderboard.recompute import recompute
from leaderboard.slice_labels import category_label, value_label, value_order

ROWS = [
    {"model": "a-1", "display_name": "Alpha", "organization": "OrgA", "license": "Apache-2.0",
     "open_weights": None, "rank": 1, "rating": 1100.0, "votes": 50, "ci_lower": 1090.0,
     "ci_upper": 1110.0},
    {"model": "b-2", "display_name": "Beta", "organization": "OrgB", "license": "Proprietary",
     "open_weights": None, "rank": 2, "rating": 1000.0, "votes": 300, "ci_lower": 980.0,
     "ci_upper": 1020.0},
    {"model": "c-3", "display_name": "Gamma alpha", "organization": "OrgA", "license": "",
     "open_weights": False, "rank": 2, "rating": 990.0, "votes": 10, "ci_lower": None,
     "ci_upper": None},
]  # fmt: skip


def test_search_filters_and_sort_on_the_rows():
    names = lambda rows: [r["model"] for r in rows]  # noqa: E731
    assert names(apply_filters(rows=ROWS, params={"q": "ALPHA"})[0]) == ["a-1", "c-3"]
    assert names(apply_filters(rows=ROWS, params={"org": "OrgA"})[0]) == ["a-1", "c-3"]
    assert names(apply_filters(rows=ROWS, params={"open": "1"})[0]) == ["a-1"]
    assert names(apply_filters(rows=ROWS, params={"open": "0"})[0]) == ["b-2", "c-3"]
    assert names(apply_filters(rows=ROWS, params={"sort": "votes"})[0]) == ["b-2", "a-1", "c-3"]
    rows, form = apply_filters(rows=ROWS, params={"sort": "votes", "dir": "asc", "q": "a"})
    assert names(rows) == ["c-3", "a-1", "b-2"] and form["dir"] == "asc"
    # A missing value sorts last in both directions.
    assert (
        names(apply_filters(rows=ROWS, params={"sort": "interval", "dir": "asc"})[0])[-1] == "c-3"
    )
    # Unknown values are ignored, not errors.
    rows, form = apply_filters(rows=ROWS, params={"sort": "nope", "open": "x", "dir": "up"})
    assert names(rows) == ["a-1", "b-2", "c-3"] and form["sort"] == "" and form["open"] == ""
    assert form["organizations"] == ["OrgA", "OrgB"] and form["total"] == 3
    assert [openness(r) for r in ROWS] == ["1", "0", "0"]


def _board_models(html: str) -> list[str]:
    table = html.split('id="board"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<a href="/models/([^/]+)/"', table)


def test_the_page_filters_and_sorts_without_javascript(client, simulated):
    recompute(trigger="test")
    everyone = _board_models(client.get("/").content.decode())
    assert len(everyone) == 11
    html = client.get("/", {"q": "codestral"}).content.decode()
    assert _board_models(html) == [m for m in everyone if "codestral" in m]
    assert f"of {len(everyone)} models shown" in html
    by_votes = _board_models(client.get("/", {"sort": "votes", "dir": "asc"}).content.decode())
    votes = {m["model"]: m["votes"] for m in client.get("/api/v1/leaderboard").json()["models"]}
    assert sorted(by_votes) == sorted(everyone)
    assert [votes[m] for m in by_votes] == sorted(votes[m] for m in everyone)
    html = client.get("/", {"q": "no-such-model"}).content.decode()
    assert _board_models(html) == [] and "no model matches these filters" in html


def test_slice_values_have_human_names_in_order():
    assert value_label("language", "csharp") == "C#"
    assert value_label("language", "cpp") == "C++"
    assert value_label("language", "unknown") == "Unknown language"
    assert value_label("task_type", "data_ml") == "Data/ML"
    assert value_label("natural_language", "unknown").startswith("Unknown")
    assert value_label("natural_language", "xx") == "XX"
    assert category_label("language", "csharp") == "Programming language: C#"
    buckets = sorted(
        [">16k", "<1k", "4-16k", "1-4k"], key=lambda v: value_order("context_bucket", v)
    )
    assert buckets == ["<1k", "1-4k", "4-16k", ">16k"]
    langs = sorted(["unknown", "python", "csharp"], key=lambda v: value_order("language", v))
    assert langs == ["csharp", "python", "unknown"]


def test_the_category_selector_shows_names_not_keys(client, simulated):
    recompute(trigger="test")
    html = client.get("/").content.decode()
    select = html.split('name="category"', 1)[1].split("</select>", 1)[0]
    assert "data_ml" not in re.sub(r'value="[^"]*"', "", select)
    assert "Task type: Data/ML" in select or "Task type: Frontend" in select
