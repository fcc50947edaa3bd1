"""One vocabulary: a slice value reads the same on the board, the model page and its chart,
compare, `/slices/`, `/correlations/` and in the API's `label` fields (`C#`, `Data/ML`)."""

from __future__ import annotations

import json
import re

from leaderboard.recompute import recompute
from leaderboard.slice_labels import category_label, value_label


def test_value_labels():
    assert value_label("language", "csharp") == "C#"
    assert value_label("natural_language", "de") == "German"
    assert value_label("task_type", "data_ml") == "Data/ML"
    assert category_label("language", "csharp") == "Programming language: C#"


def _chart(html: str, name: str) -> dict:
    found = re.search(rf'<script id="{name}" type="application/json">(.*?)</script>', html, re.S)
    assert found, name
    return json.loads(found.group(1))


def test_model_page_chart_board_compare_and_api_agree(client, simulated):
    recompute(trigger="test")
    html = client.get("/models/codestral-2405/").content.decode()
    assert "Task type: Data/ML" in html and "Task type: data_ml" not in html
    slices = _chart(html, "slices")
    labels = [t for trace in slices["data"] for t in (trace.get("y") or []) if isinstance(t, str)]
    assert "Task type: Data/ML" in labels and not any("data_ml" in t for t in labels)

    board = client.get("/", {"category": "task_type:data_ml"}).content.decode()
    assert 'Leaderboard: <span class="category-name">Task type: Data/ML</span>' in board

    compare = client.get("/compare/", {"a": "codestral-2405", "b": "deepseek-coder-fim"})
    assert "Data/ML" in compare.content.decode()

    slices_page = client.get("/slices/", {"dimension": "task_type"}).content.decode()
    heat = _chart(slices_page, "slice-ratings")
    assert "Data/ML" in heat["data"][0]["x"] and "data_ml" not in heat["data"][0]["x"]

    api = client.get("/api/v1/categories").json()
    by_key = {c["key"]: c for c in api["categories"]}
    assert by_key["task_type:data_ml"]["label"] == "Task type: Data/ML"
    one = client.get("/api/v1/leaderboard", {"category": "task_type:data_ml"}).json()
    assert one["category"]["label"] == "Task type: Data/ML"
