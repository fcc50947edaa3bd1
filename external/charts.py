"""Plotly figures for the correlations page, built server-side and sent as JSON.

Same conventions as ``leaderboard.charts``: the browser only runs plotly.js on the JSON,
and the table next to the charts carries the same numbers for readers without JavaScript.
"""

from __future__ import annotations

import json
from typing import Any

import plotly.graph_objects as go

from leaderboard.charts import LAYOUT


def _as_dict(fig: go.Figure) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(fig.to_json())
    return parsed


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


_AROUND = ("top right", "bottom left", "top left", "bottom right")


def _label_positions(points: list[dict[str, Any]]) -> list[str]:
    """Neighbours along the x axis write their names on different sides of their points,
    so that close points' names do not print over each other."""
    order = sorted(range(len(points)), key=lambda i: (points[i]["score"], points[i]["rating"]))
    out = [""] * len(points)
    for rank, i in enumerate(order):
        out[i] = _AROUND[rank % len(_AROUND)]
    return out


def scatter(results: list[dict[str, Any]], source_name: str) -> dict[str, Any]:
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
                textposition=_label_positions(points),
                textfont={"size": 10},
                cliponaxis=False,  # labels of points at the edges stay readable
                name=r["board"],
                visible=i == 0,
                hovertemplate=(
                    "%{text}<br>as %{customdata}<br>score %{x:.2f}<br>rating %{y:.1f}<extra></extra>"
                ),
            )
        )

    def title(r: dict[str, Any]) -> str:
        rho, pr = r["spearman"], r["pearson"]
        return (
            f"{r['board']}: Spearman {_fmt(rho['value'])} "
            f"[{_fmt(rho['ci_lower'])}, {_fmt(rho['ci_upper'])}], "
            f"Pearson {_fmt(pr['value'])}, n = {r['n']}"
        )

    def x_range(r: dict[str, Any]) -> list[float] | None:
        # Room on both sides for the model names written next to the points.
        xs = [p["score"] for p in r["models"]]
        if not xs:
            return None
        lo, hi = min(xs), max(xs)
        pad = 0.25 * (hi - lo) if hi > lo else 1.0
        return [lo - pad, hi + pad]

    def heading(r: dict[str, Any]) -> dict[str, Any]:
        return {
            "text": title(r),
            "font": {"size": 13},
            "x": 0.01,
            "xanchor": "left",
            "y": 0.97,
            "yref": "container",
        }

    fig = go.Figure(traces)
    fig.update_layout(
        title=heading(results[0]),
        xaxis={"title": f"{source_name} score", "range": x_range(results[0])},
        yaxis_title="Arena rating",
        showlegend=False,
        **{**LAYOUT, "margin": {"l": 60, "r": 30, "t": 100, "b": 60}},
    )
    if len(results) > 1:
        fig.update_layout(
            updatemenus=[
                {
                    "type": "dropdown",
                    "x": 0,
                    "xanchor": "left",
                    "y": 1.03,
                    "yanchor": "bottom",
                    "buttons": [
                        {
                            "label": r["board"],
                            "method": "update",
                            "args": [
                                {"visible": [j == i for j in range(len(results))]},
                                {"title": heading(r), "xaxis.range": x_range(r)},
                            ],
                        }
                        for i, r in enumerate(results)
                    ],
                }
            ]
        )
    return _as_dict(fig)


def slice_bars(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Spearman with its interval for one board across the overall board and each slice;
    horizontal, one labelled row per slice (long slice names never overlap)."""
    fig = go.Figure(
        go.Scatter(
            y=[r["slice_label"] for r in results],
            x=[r["spearman"]["value"] for r in results],
            mode="markers",
            error_x={
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
            hovertemplate="%{y}: %{x:.2f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"Spearman with {results[0]['board']} per slice (95% interval)",
        xaxis_range=[-1.05, 1.05],
        xaxis_title="Spearman",
        yaxis_title="Slice",
        meta={"labels_on": "y"},
        **{
            **LAYOUT,
            "height": max(300, 90 + 24 * len(results)),
            "margin": {**LAYOUT["margin"], "l": 230},
        },
    )
    fig.update_yaxes(autorange="reversed", automargin=True)
    return _as_dict(fig)
