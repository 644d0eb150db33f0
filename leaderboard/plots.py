"""Altair charts of the board: per-slice bars, a radar of metric groups, seen vs unseen scatter.

Each builder takes a tidy polars frame and returns an Altair chart, so charts are tested without a
browser.  Labels are data, never HTML.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import polars as pl


def slice_bars(frame: pl.DataFrame, metric_title: str) -> alt.Chart | alt.LayerChart:
    """Grouped bars: one group per slice value, one bar per system; error bars where ``low``/``high`` are set.

    ``frame``: columns ``system``, ``slice_value``, ``value``, ``n_items`` and optionally ``low``, ``high``.
    """
    data = frame.to_pandas()
    base = alt.Chart(data).encode(
        x=alt.X("slice_value:N", title=None, axis=alt.Axis(labelAngle=-20, labelLimit=180)),
        xOffset=alt.XOffset("system:N"),
        color=alt.Color("system:N", title="system", legend=alt.Legend(orient="bottom", columns=2, labelLimit=320)),
    )
    bars = base.mark_bar().encode(
        y=alt.Y("value:Q", title=metric_title),
        tooltip=[alt.Tooltip("system:N"), alt.Tooltip("slice_value:N", title="slice value"), alt.Tooltip("value:Q", format=".2f"), alt.Tooltip("n_items:Q", title="items")],
    )
    if "low" in frame.columns and frame["low"].drop_nulls().len():
        whiskers = base.mark_rule(color="#333").encode(y="low:Q", y2="high:Q")
        return alt.layer(bars, whiskers).properties(height=340)
    return bars.properties(height=340)


def radar_points(frame: pl.DataFrame, axes: Sequence[str]) -> pl.DataFrame:
    """Cartesian points of each system's polygon (closed: the first axis repeated at the end).

    ``frame``: columns ``system``, ``axis``, ``value`` (0..1 scale expected; values above 1 extend past the rim).
    """
    rows = []
    n = len(axes)
    for system in dict.fromkeys(frame["system"].to_list()):
        mine = {a: v for a, v in frame.filter(pl.col("system") == system).select("axis", "value").iter_rows()}
        for order, axis in enumerate([*axes, axes[0]]):
            value = float(mine.get(axis) or 0.0)
            angle = math.pi / 2 - 2 * math.pi * (order % n) / n
            rows.append({"system": system, "axis": axis, "value": value, "order": order, "x": value * math.cos(angle), "y": value * math.sin(angle)})
    return pl.DataFrame(rows, schema={"system": pl.String, "axis": pl.String, "value": pl.Float64, "order": pl.Int64, "x": pl.Float64, "y": pl.Float64})


def radar(frame: pl.DataFrame, axes: Sequence[str], *, rim: float = 1.0) -> alt.LayerChart:
    """A radar chart (as in PAGED's Figure 7): one closed polygon per system over ``axes``."""
    n = len(axes)
    grid_rows = []
    for ring in (0.25, 0.5, 0.75, 1.0):
        for order in range(n + 1):
            angle = math.pi / 2 - 2 * math.pi * (order % n) / n
            grid_rows.append({"ring": ring, "order": order, "x": rim * ring * math.cos(angle), "y": rim * ring * math.sin(angle)})
    spokes = []
    for index, axis in enumerate(axes):
        angle = math.pi / 2 - 2 * math.pi * index / n
        spokes += [{"axis": axis, "end": 0, "x": 0.0, "y": 0.0}, {"axis": axis, "end": 1, "x": rim * math.cos(angle), "y": rim * math.sin(angle)}]
    labels = [{"axis": axis, "x": 1.15 * rim * math.cos(math.pi / 2 - 2 * math.pi * i / n), "y": 1.12 * rim * math.sin(math.pi / 2 - 2 * math.pi * i / n)} for i, axis in enumerate(axes)]
    scale = alt.Scale(domain=[-1.35 * rim, 1.35 * rim])
    x, y = alt.X("x:Q", scale=scale, axis=None), alt.Y("y:Q", scale=scale, axis=None)
    grid = alt.Chart(pl.DataFrame(grid_rows).to_pandas()).mark_line(color="#ddd").encode(x=x, y=y, detail="ring:N", order="order:Q")
    spoke = alt.Chart(pl.DataFrame(spokes).to_pandas()).mark_line(color="#ddd").encode(x=x, y=y, detail="axis:N", order="end:Q")
    text = alt.Chart(pl.DataFrame(labels).to_pandas()).mark_text(fontSize=11, color="#444").encode(x=x, y=y, text="axis:N")
    points = radar_points(frame, axes).to_pandas()
    shapes = alt.Chart(points).mark_line(point=True, strokeWidth=2, opacity=0.85).encode(
        x=x, y=y, color=alt.Color("system:N", legend=alt.Legend(orient="bottom", columns=2, labelLimit=320)), order="order:Q",
        tooltip=[alt.Tooltip("system:N"), alt.Tooltip("axis:N"), alt.Tooltip("value:Q", format=".3f")],
    )
    return alt.layer(grid, spoke, text, shapes).properties(width=520, height=520)


def seen_unseen(frame: pl.DataFrame, x_title: str, y_title: str) -> alt.LayerChart:
    """One point per system: its value on one slice value (x) against another (y), with the diagonal.

    ``frame``: columns ``system``, ``x``, ``y``, ``n_x``, ``n_y``.
    """
    data = frame.to_pandas()
    values = [v for v in [*frame["x"].to_list(), *frame["y"].to_list()] if v is not None]
    top = max(values + [1e-9]) * 1.05
    diagonal = alt.Chart(pl.DataFrame({"x": [0.0, top], "y": [0.0, top]}).to_pandas()).mark_line(color="#999", strokeDash=[4, 4]).encode(x="x:Q", y="y:Q")
    points = alt.Chart(data).mark_circle(size=110).encode(
        x=alt.X("x:Q", title=x_title, scale=alt.Scale(domain=[0, top])),
        y=alt.Y("y:Q", title=y_title, scale=alt.Scale(domain=[0, top])),
        color=alt.Color("system:N", legend=alt.Legend(orient="bottom", columns=2, labelLimit=320)),
        tooltip=[alt.Tooltip("system:N"), alt.Tooltip("x:Q", format=".2f", title=x_title), alt.Tooltip("y:Q", format=".2f", title=y_title), alt.Tooltip("n_x:Q", title="items (x)"), alt.Tooltip("n_y:Q", title="items (y)")],
    )
    return alt.layer(diagonal, points).properties(height=420)
