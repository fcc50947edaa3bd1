"""Plotly figures for the pages, built server-side from a board dict and sent as JSON.

The browser only runs plotly.js (served from our static files) on the JSON; the table
next to each chart carries the same numbers for readers without JavaScript.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from .selectors import ModelSlice

LAYOUT: dict[str, Any] = {
    "margin": {"l": 60, "r": 20, "t": 40, "b": 60},
    "template": "plotly_white",
    "height": 420,
}


def _as_dict(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


def interval_chart(board: Mapping[str, Any]) -> dict:
    rows = board["models"]
    names = [r["display_name"] for r in rows]
    ratings = [r["rating"] for r in rows]
    fig = go.Figure(
        go.Scatter(
            x=names,
            y=ratings,
            mode="markers",
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [(r["ci_upper"] or 0) - (r["rating"] or 0) for r in rows],
                "arrayminus": [(r["rating"] or 0) - (r["ci_lower"] or 0) for r in rows],
            },
            hovertemplate="%{x}: %{y:.1f}<extra></extra>",
        )
    )
    fig.update_layout(title="Rating with 95% interval", yaxis_title="Rating", **LAYOUT)
    return _as_dict(fig)


def heatmap(board: dict, matrix: str, title: str, *, fmt: str, colorscale: str = "RdBu") -> dict:
    names = [r["display_name"] for r in board["models"]]
    z = board["matrices"][matrix]
    text = [[("" if v is None else format(v, fmt)) for v in row] for row in z]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=names,
            y=names,
            text=text,
            texttemplate="%{text}",
            colorscale=colorscale,
            hovertemplate="%{y} vs %{x}: %{text}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title, xaxis_title="Model B", yaxis_title="Model A", **{**LAYOUT, "height": 520}
    )
    fig.update_yaxes(autorange="reversed")
    return _as_dict(fig)


def _focused(values: list[float | None], *, pad: float = 0.05) -> list[float]:
    """A rate axis around the data (within 0-1), so that 0.45 and 0.55 look different."""
    known = [v for v in values if v is not None]
    if not known:
        return [0.0, 1.0]
    return [max(0.0, min(known) - pad), min(1.0, max(known) + pad)]


def average_win_rate_chart(board: Mapping[str, Any]) -> dict:
    rows = sorted(board["models"], key=lambda r: -(r["avg_win_rate"] or 0))
    fig = go.Figure(
        # Points, not bars: on an axis that does not start at zero a bar's length would mislead.
        go.Scatter(
            x=[r["display_name"] for r in rows],
            y=[r["avg_win_rate"] for r in rows],
            mode="markers",
            marker={"size": 10},
            hovertemplate="%{x}: %{y:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title="Average win rate against all other models (predicted)",
        yaxis_range=_focused([r["avg_win_rate"] for r in rows], pad=0.04),
        yaxis_title="Average win rate",
        **LAYOUT,
    )
    return _as_dict(fig)


def top_slot_chart(top: Mapping[str, Any] | None) -> dict | None:
    if not top:
        return None
    fig = go.Figure(
        go.Bar(
            x=["top completion", "bottom completion"],
            y=[top["p"], 1 - top["p"]],
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [top["upper"] - top["p"], top["p"] - top["lower"]],
                "arrayminus": [top["p"] - top["lower"], top["upper"] - top["p"]],
            },
            text=[f"{top['p']:.1%}", f"{1 - top['p']:.1%}"],
            textposition="outside",
        )
    )
    fig.update_layout(
        title="Chance each slot wins between two equal models", yaxis_range=[0, 1], **LAYOUT
    )
    return _as_dict(fig)


def history_chart(points: list[dict], name: str) -> dict:
    fig = go.Figure(
        go.Scatter(
            x=[p["computed_at"] for p in points],
            y=[p["rating"] for p in points],
            mode="lines+markers",
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [(p["ci_upper"] or 0) - (p["rating"] or 0) for p in points],
                "arrayminus": [(p["rating"] or 0) - (p["ci_lower"] or 0) for p in points],
            },
        )
    )
    fig.update_layout(title=f"Rating history of {name}", yaxis_title="Rating", **LAYOUT)
    return _as_dict(fig)


def opponents_chart(opponents: list[dict], name: str) -> dict:
    fig = go.Figure(
        [
            go.Scatter(
                name="observed",
                mode="markers",
                marker={"size": 10},
                x=[o["display_name"] for o in opponents],
                y=[o["win_fraction"] for o in opponents],
            ),
            go.Scatter(
                name="predicted",
                mode="markers",
                marker={"size": 10, "symbol": "diamond-open"},
                x=[o["display_name"] for o in opponents],
                y=[o["predicted"] for o in opponents],
            ),
        ]
    )
    fig.update_layout(
        title=f"Win rate of {name} against each opponent",
        yaxis_range=_focused(
            [o["win_fraction"] for o in opponents] + [o["predicted"] for o in opponents]
        ),
        yaxis_title="Win rate",
        **LAYOUT,
    )
    return _as_dict(fig)


def slices_chart(slices: list[ModelSlice], name: str) -> dict:
    """Horizontal: one labelled row per slice, so long labels never overlap or rotate."""
    fig = go.Figure(
        go.Scatter(
            y=[s["label"] for s in slices],
            x=[s["rating"] for s in slices],
            mode="markers",
            error_x={
                "type": "data",
                "symmetric": False,
                "array": [(s["ci_upper"] or 0) - (s["rating"] or 0) for s in slices],
                "arrayminus": [(s["rating"] or 0) - (s["ci_lower"] or 0) for s in slices],
            },
            hovertemplate="%{y}: %{x:.1f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"Rating of {name} per slice",
        xaxis_title="Rating",
        yaxis_title="Slice",
        meta={"labels_on": "y"},
        **{
            **LAYOUT,
            "height": max(420, 80 + 22 * len(slices)),
            "margin": {**LAYOUT["margin"], "l": 230},
        },
    )
    fig.update_yaxes(autorange="reversed", automargin=True)
    return _as_dict(fig)


# --- Win rates by slice (the /slices/ page) ---------------------------------------------


def _slice_hover(cell: dict | None) -> str:
    if cell is None:
        return "no board (too few votes)"
    parts = []
    if cell["rating"] is not None:
        parts.append(f"rating {cell['rating']:.1f}")
    if cell["ci_lower"] is not None and cell["ci_upper"] is not None:
        parts.append(f"95% interval [{cell['ci_lower']:.1f}, {cell['ci_upper']:.1f}]")
    if cell["avg_win_rate"] is not None:
        parts.append(f"average win rate {cell['avg_win_rate']:.3f}")
    parts.append(f"{cell['votes']} votes")
    if cell["rank"] is not None:
        parts.append(f"rank {cell['rank']}")
    return ", ".join(parts)


def slice_heatmap(
    data: Mapping[str, Any], field: str, title: str, fmt: str, colorscale: str
) -> dict:
    values = [v.get("label") or v["value"] for v in data["values"]]
    models = data["models"]
    z = [[(c or {}).get(field) for c in m["cells"]] for m in models]
    text = [["" if v is None else format(v, fmt) for v in row] for row in z]
    hover = [[_slice_hover(c) for c in m["cells"]] for m in models]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=values,
            y=[m["display_name"] for m in models],
            text=text,
            customdata=hover,
            texttemplate="%{text}",
            colorscale=colorscale,
            hovertemplate="%{y} on %{x}: %{customdata}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title,
        xaxis_title=data["label"],
        **{
            **LAYOUT,
            "height": max(420, 60 + 34 * len(models)),
            "margin": {**LAYOUT["margin"], "l": 200},
        },
    )
    fig.update_yaxes(autorange="reversed")
    return _as_dict(fig)


def slice_tau_chart(data: Mapping[str, Any]) -> dict:
    rows = data["test"]["values"]
    fig = go.Figure(
        go.Bar(
            x=[r.get("label") or r["value"] for r in rows],
            y=[r["kendall_tau"] for r in rows],
            text=["" if r["kendall_tau"] is None else f"{r['kendall_tau']:.2f}" for r in rows],
            textposition="outside",
        )
    )
    fig.update_layout(
        title="Kendall's tau between each value's ranking and the overall ranking",
        yaxis_range=[-1.05, 1.15],
        yaxis_title="tau",
        **LAYOUT,
    )
    return _as_dict(fig)


def latency_chart(board: Mapping[str, Any]) -> dict | None:
    """Rating against median served latency: the trade-off the pair sampler makes."""
    rows = [
        r
        for r in board["models"]
        if r.get("latency_p50_ms") is not None and r["rating"] is not None
    ]
    if len(rows) < 2:
        return None
    fig = go.Figure(
        go.Scatter(
            x=[round(r["latency_p50_ms"]) for r in rows],
            y=[r["rating"] for r in rows],
            mode="markers+text",
            text=[r["display_name"] for r in rows],
            textposition="top center",
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [(r["ci_upper"] or r["rating"]) - r["rating"] for r in rows],
                "arrayminus": [r["rating"] - (r["ci_lower"] or r["rating"]) for r in rows],
            },
            hovertemplate="%{text}<br>median latency %{x} ms<br>rating %{y:.1f}<extra></extra>",
        )
    )
    fig.update_layout(
        title="Rating against median served latency",
        xaxis_title="Median served latency (ms)",
        yaxis_title="Rating",
        **LAYOUT,
    )
    return _as_dict(fig)
