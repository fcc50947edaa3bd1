"""Plotly figures for the correlations page, built server-side and sent as JSON.

Same conventions as ``leaderboard.charts``: the browser only runs plotly.js on the JSON,
and the table next to the charts carries the same numbers for readers without JavaScript.
"""

from __future__ import annotations

import json

import plotly.graph_objects as go

from leaderboard.charts import LAYOUT


def _as_dict(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def scatter(results: list[dict], source_name: str) -> dict:
    """Arena rating against the source's score, one trace per board (a menu switches them)."""
    traces = []
    for i, r in enumerate(results):
        points = r["models"]
        traces.append(
            go.Scatter(
                x=[p["score"] for p in points],
                y=[p["rating"] for p in points],
                text=[p["display_name"] for p in points],
                customdata=[p["name"] for p in points],
                mode="markers+text",
                textposition="top center",
                name=r["board"],
                visible=i == 0,
                hovertemplate=(
                    "%{text}<br>as %{customdata}<br>score %{x:.2f}<br>rating %{y:.1f}<extra></extra>"
                ),
            )
        )

    def title(r: dict) -> str:
        rho, pr = r["spearman"], r["pearson"]
        return (
            f"{r['board']}: Spearman {_fmt(rho['value'])} "
            f"[{_fmt(rho['ci_lower'])}, {_fmt(rho['ci_upper'])}], "
            f"Pearson {_fmt(pr['value'])}, n = {r['n']}"
        )

    fig = go.Figure(traces)
    fig.update_layout(
        title={"text": title(results[0]), "font": {"size": 13}},
        xaxis_title=f"{source_name} score",
        yaxis_title="Arena rating",
        showlegend=False,
        **{**LAYOUT, "margin": {"l": 60, "r": 20, "t": 90, "b": 60}},
    )
    if len(results) > 1:
        fig.update_layout(
            updatemenus=[
                {
                    "type": "dropdown",
                    "x": 0,
                    "y": 1.22,
                    "xanchor": "left",
                    "buttons": [
                        {
                            "label": r["board"],
                            "method": "update",
                            "args": [
                                {"visible": [j == i for j in range(len(results))]},
                                {"title": {"text": title(r), "font": {"size": 13}}},
                            ],
                        }
                        for i, r in enumerate(results)
                    ],
                }
            ]
        )
    return _as_dict(fig)


def slice_bars(results: list[dict]) -> dict:
    """Spearman with its interval for one board across the overall board and each slice."""
    fig = go.Figure(
        go.Scatter(
            x=[r["slice_label"] for r in results],
            y=[r["spearman"]["value"] for r in results],
            mode="markers",
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [
                    (r["spearman"]["ci_upper"] - r["spearman"]["value"])
                    if r["spearman"]["value"] is not None and r["spearman"]["ci_upper"] is not None
                    else 0
                    for r in results
                ],
                "arrayminus": [
                    (r["spearman"]["value"] - r["spearman"]["ci_lower"])
                    if r["spearman"]["value"] is not None and r["spearman"]["ci_lower"] is not None
                    else 0
                    for r in results
                ],
            },
            hovertemplate="%{x}: %{y:.2f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"Spearman with {results[0]['board']} per slice (95% bootstrap interval)",
        yaxis_range=[-1.05, 1.05],
        yaxis_title="Spearman",
        **LAYOUT,
    )
    return _as_dict(fig)
