"""The personal page's chart: each model's rank over the user's votes (as the extension's panel draws it)."""

from __future__ import annotations

import json
from typing import Any

import plotly.graph_objects as go

from leaderboard.charts import LAYOUT


def rank_history(
    history: list[list[dict[str, Any]]], checkpoints: list[int]
) -> dict[str, Any] | None:
    """`checkpoints[i]`: how many of the user's votes the i-th list was fitted on."""
    if len(history) < 2:
        return None
    ranks: dict[str, list[int | None]] = {}
    for step, scores in enumerate(history):
        ordered = sorted(scores, key=lambda s: -float(s["elo"]))
        for rank, score in enumerate(ordered, start=1):
            ranks.setdefault(score["model"], [None] * len(history))[step] = rank
    x = checkpoints if len(checkpoints) == len(history) else list(range(1, len(history) + 1))
    fig = go.Figure(
        [go.Scatter(x=x, y=r, mode="lines+markers", name=model) for model, r in ranks.items()]
    )
    fig.update_layout(
        title="Your ranking of the models as your votes accumulate",
        xaxis_title="your votes",
        yaxis_title="rank",
        **LAYOUT,
    )
    fig.update_yaxes(autorange="reversed", dtick=1)
    chart: dict[str, Any] = json.loads(fig.to_json())
    return chart
