"""Altair charts of the board: per-slice bars, a radar of metrics, seen vs unseen scatter, progress over time.

Each builder takes a tidy polars frame and returns an Altair chart, so charts are tested without a
browser.  Labels are data, never HTML.  Every builder takes the page's colour scale
(``procbench.leaderboard.ui.colour_scale``), so one system has one colour on every chart of a page; series are
keyed by a name unique per submission (``procbench.leaderboard.ui.system_names``), never a shortened model name.

:func:`vega_lite` turns a chart into the spec ``st.altair_chart`` would send, once: the Charts page keeps it
per store version and draws it with ``st.vega_lite_chart``, so a warm view neither builds nor validates
the chart again (building and validating were most of that page's server CPU, issue #19).
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import altair as alt
import polars as pl
from streamlit import dataframe_util
from streamlit.util import calc_hash

_TRANSFORMER = "procbench_arrow"
_converting = threading.Lock()  # Altair's theme and data transformer are process-wide settings


def _to_arrow_dataset(data: Any, datasets: dict[str, bytes]) -> dict[str, str]:
    """Altair data transformer: the data as Arrow IPC bytes named by their hash, as Streamlit's own conversion names them."""
    payload = dataframe_util.convert_anything_to_arrow_bytes(data)
    name = calc_hash(payload)
    datasets[name] = payload
    return {"name": name}


def vega_lite(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """The chart's Vega-Lite spec with its data as named Arrow datasets: what ``st.altair_chart`` sends, for ``st.vega_lite_chart``.

    As Streamlit converts a chart: Altair's "none" theme where the default one is active (its width and height
    defaults do not suit Streamlit), every data frame serialised to Arrow rather than inlined as JSON records.
    Treat the result as read-only (it is shared between views); Streamlit copies a spec before changing it.
    """
    datasets: dict[str, bytes] = {}
    alt.data_transformers.register(_TRANSFORMER, _to_arrow_dataset)
    with _converting:
        theme = (
            alt.theme.enable("none") if alt.theme.active == "default" else contextlib.nullcontext()
        )
        with theme, alt.data_transformers.enable(_TRANSFORMER, datasets=datasets):
            spec = chart.to_dict()
    spec["datasets"] = {**spec.get("datasets", {}), **datasets}
    return spec


def _fixed_height() -> alt.AutoSizeParams:
    """Fit the page's width only: the chart's ``height`` is its plot's, legend and axis titles added below.

    Issue #30: Streamlit fits a stretched chart's *whole* height, legend included, to the spec's height
    (``autosize: fit``), so a scatter of many systems (the legend at the bottom, two columns) kept a
    plot about 70 px tall.
    """
    return alt.AutoSizeParams(type="fit-x", contains="padding")


def _layer(*charts: alt.Chart) -> alt.LayerChart:
    """``alt.layer`` of charts without facet encodings (which it would hoist into a FacetChart)."""
    return alt.LayerChart(layer=list(charts))


def _colour(scale: alt.Scale | None, title: str = "system") -> alt.Color:
    legend = alt.Legend(orient="bottom", columns=2, labelLimit=360, title=title)
    return (
        alt.Color("system:N", scale=scale, legend=legend)
        if scale is not None
        else alt.Color("system:N", legend=legend)
    )


def slice_bars(
    frame: pl.DataFrame, metric_title: str, *, scale: alt.Scale | None = None
) -> alt.Chart | alt.LayerChart:
    """Grouped bars: one group per slice value, one bar per system; error bars where ``low``/``high`` are set.

    ``frame``: columns ``system``, ``slice_value``, ``value``, ``n_items`` and optionally ``low``, ``high``.
    Rows without a value are left out (no bar), never drawn as 0.
    """
    frame = frame.filter(pl.col("value").is_not_null())
    data = frame.to_pandas()
    base = alt.Chart(data).encode(
        x=alt.X("slice_value:N", title=None, axis=alt.Axis(labelAngle=-20, labelLimit=220)),
        xOffset=alt.XOffset("system:N"),
        color=_colour(scale),
    )
    bars = base.mark_bar().encode(
        y=alt.Y("value:Q", title=metric_title),
        tooltip=[
            alt.Tooltip("system:N"),
            alt.Tooltip("slice_value:N", title="slice value"),
            alt.Tooltip("value:Q", format=".2f"),
            alt.Tooltip("n_items:Q", title="items"),
        ],
    )
    if "low" in frame.columns and frame["low"].drop_nulls().len():
        whiskers = base.mark_rule(color="#333").encode(y="low:Q", y2="high:Q")
        return _layer(bars, whiskers).properties(height=340, autosize=_fixed_height())
    return bars.properties(height=340, autosize=_fixed_height())


def axis_scales(
    frame: pl.DataFrame, axes: Sequence[str], floors: Mapping[str, float] | None = None
) -> dict[str, float]:
    """Each axis's own rim: the largest value any system has on it (at least its floor, e.g. 1.0 for a fraction)."""
    floors = floors or {}
    out = {}
    for axis in axes:
        values = frame.filter((pl.col("axis") == axis) & pl.col("value").is_not_null())[
            "value"
        ].to_list()
        out[axis] = max([floors.get(axis, 0.0), *values]) or 1.0
    return out


def radar_points(
    frame: pl.DataFrame, axes: Sequence[str], scales: Mapping[str, float] | None = None
) -> pl.DataFrame:
    """Cartesian points of each system's polygon, each axis on its own scale (``scales``: axis -> value at the rim).

    ``frame``: columns ``system``, ``axis``, ``value``.  A missing value is left out, never drawn as 0:
    the polygon is broken there (``segment`` numbers the runs of consecutive present axes, and a
    closed polygon is drawn only when every axis is present).
    """
    scales = scales or {}
    rows = []
    n = len(axes)
    for system in dict.fromkeys(frame["system"].to_list()):
        mine = {
            a: v
            for a, v in frame.filter(pl.col("system") == system).select("axis", "value").iter_rows()
            if v is not None
        }
        complete = all(a in mine for a in axes)
        order_axes = [*axes, axes[0]] if complete else list(axes)
        segment = 0
        for order, axis in enumerate(order_axes):
            if axis not in mine:
                segment += 1
                continue
            raw = float(mine[axis])
            value = raw / (scales.get(axis) or 1.0)
            angle = math.pi / 2 - 2 * math.pi * (order % n) / n
            rows.append(
                {
                    "system": system,
                    "axis": axis,
                    "value": value,
                    "raw": raw,
                    "order": order,
                    "segment": f"{system}#{segment}",
                    "x": value * math.cos(angle),
                    "y": value * math.sin(angle),
                }
            )
    schema = {
        "system": pl.String,
        "axis": pl.String,
        "value": pl.Float64,
        "raw": pl.Float64,
        "order": pl.Int64,
        "segment": pl.String,
        "x": pl.Float64,
        "y": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema)


def radar(
    frame: pl.DataFrame,
    axes: Sequence[str],
    *,
    scales: Mapping[str, float] | None = None,
    scale: alt.Scale | None = None,
) -> alt.LayerChart:
    """A radar chart (as in PAGED's Figure 7): one polygon per system, every axis on its own scale (rim value in its label)."""
    n = len(axes)
    scales = scales or {}
    grid_rows = []
    for ring in (0.25, 0.5, 0.75, 1.0):
        for order in range(n + 1):
            angle = math.pi / 2 - 2 * math.pi * (order % n) / n
            grid_rows.append(
                {
                    "ring": ring,
                    "order": order,
                    "x": ring * math.cos(angle),
                    "y": ring * math.sin(angle),
                }
            )
    spokes = []
    for index, axis in enumerate(axes):
        angle = math.pi / 2 - 2 * math.pi * index / n
        spokes += [
            {"axis": axis, "end": 0, "x": 0.0, "y": 0.0},
            {"axis": axis, "end": 1, "x": math.cos(angle), "y": math.sin(angle)},
        ]
    labels = [
        {
            "axis": f"{axis} (rim {scales[axis]:.3g})" if axis in scales else axis,
            "x": 1.18 * math.cos(math.pi / 2 - 2 * math.pi * i / n),
            "y": 1.12 * math.sin(math.pi / 2 - 2 * math.pi * i / n),
        }
        for i, axis in enumerate(axes)
    ]
    domain = alt.Scale(domain=[-1.45, 1.45])
    x, y = alt.X("x:Q", scale=domain, axis=None), alt.Y("y:Q", scale=domain, axis=None)
    grid = (
        alt.Chart(pl.DataFrame(grid_rows).to_pandas())
        .mark_line(color="#ddd")
        .encode(x=x, y=y, detail="ring:N", order="order:Q")
    )
    spoke = (
        alt.Chart(pl.DataFrame(spokes).to_pandas())
        .mark_line(color="#ddd")
        .encode(x=x, y=y, detail="axis:N", order="end:Q")
    )
    text = (
        alt.Chart(pl.DataFrame(labels).to_pandas())
        .mark_text(fontSize=11, color="#444")
        .encode(x=x, y=y, text="axis:N")
    )
    points = radar_points(frame, axes, scales).to_pandas()
    shapes = (
        alt.Chart(points)
        .mark_line(point=True, strokeWidth=2, opacity=0.85)
        .encode(
            x=x,
            y=y,
            color=_colour(scale),
            detail="segment:N",
            order="order:Q",
            tooltip=[
                alt.Tooltip("system:N"),
                alt.Tooltip("axis:N"),
                alt.Tooltip("raw:Q", format=".3f", title="value"),
            ],
        )
    )
    return _layer(grid, spoke, text, shapes).properties(width=560, height=560)


def seen_unseen(
    frame: pl.DataFrame, x_title: str, y_title: str, *, scale: alt.Scale | None = None
) -> alt.LayerChart:
    """One point per system: its value on one slice value (x) against another (y), with the diagonal.

    ``frame``: columns ``system``, ``x``, ``y``, ``n_x``, ``n_y`` (rows missing either value are left out).
    """
    frame = frame.drop_nulls(["x", "y"])
    data = frame.to_pandas()
    values = [v for v in [*frame["x"].to_list(), *frame["y"].to_list()] if v is not None]
    top = max(values + [1e-9]) * 1.05
    diagonal = (
        alt.Chart(pl.DataFrame({"x": [0.0, top], "y": [0.0, top]}).to_pandas())
        .mark_line(color="#999", strokeDash=[4, 4])
        .encode(x="x:Q", y="y:Q")
    )
    points = (
        alt.Chart(data)
        .mark_circle(size=110)
        .encode(
            x=alt.X("x:Q", title=x_title, scale=alt.Scale(domain=[0, top])),
            y=alt.Y("y:Q", title=y_title, scale=alt.Scale(domain=[0, top])),
            color=_colour(scale),
            tooltip=[
                alt.Tooltip("system:N"),
                alt.Tooltip("x:Q", format=".2f", title=x_title),
                alt.Tooltip("y:Q", format=".2f", title=y_title),
                alt.Tooltip("n_x:Q", title="items (x)"),
                alt.Tooltip("n_y:Q", title="items (y)"),
            ],
        )
    )
    return _layer(diagonal, points).properties(height=420, autosize=_fixed_height())


def progress(frame: pl.DataFrame, metric_title: str) -> alt.LayerChart:
    """The board's best value over time (a step line) and every row as a point, at the date its result was produced.

    ``frame``: columns ``produced_at``, ``value``, ``best``, ``system``, ``date_source`` (how the date is known:
    ``procbench.leaderboard.progress.SOURCES``, the points' legend).
    """
    from procbench.leaderboard.progress import SOURCES

    present = frame.filter(pl.col("value").is_not_null())
    data = present.to_pandas()
    # Vega's automatic time labels turn a short span into ".950"-style milliseconds: name the unit the span needs.
    first, last = (
        (present["produced_at"].min(), present["produced_at"].max())
        if present.height
        else (None, None)
    )  # datetimes (a Datetime column), None when no row has a value
    span = (
        (last - first).total_seconds()
        if isinstance(first, date) and isinstance(last, date)
        else 0.0
    )
    if span < 3600 and isinstance(first, date):
        axis = alt.Axis(format="%H:%M:%S", labelOverlap=True)
        title = f"produced on {first.strftime('%Y-%m-%d')} (time of day)"
    else:
        axis = alt.Axis(
            format="%Y-%m-%d %H:%M" if span < 2 * 86400 else "%Y-%m-%d", labelOverlap=True
        )
        title = "date the result was produced"
    legend = alt.Legend(orient="bottom", title="dated by")
    points = (
        alt.Chart(data)
        .mark_point(size=70, filled=True)
        .encode(
            # padded: a point at the first or last date is drawn whole, not cut by the plot's edge
            x=alt.X("produced_at:T", title=title, axis=axis, scale=alt.Scale(padding=14)),
            y=alt.Y("value:Q", title=metric_title),
            shape=alt.Shape("date_source:N", scale=alt.Scale(domain=list(SOURCES)), legend=legend),
            color=alt.Color(
                "date_source:N",
                scale=alt.Scale(
                    domain=list(SOURCES), range=["#6a3d9a", "#e15759", "#9e9e9e", "#2a9d8f"]
                ),
                legend=legend,
            ),
            tooltip=[
                alt.Tooltip("system:N"),
                alt.Tooltip("value:Q", format=".2f"),
                alt.Tooltip("produced_at:T", title="produced"),
                alt.Tooltip("date_source:N", title="dated by"),
            ],
        )
    )
    best = (
        alt.Chart(data)
        .mark_line(interpolate="step-after", color="#4e79a7", strokeWidth=2.5)
        .encode(x="produced_at:T", y="best:Q")
    )
    return _layer(points, best).properties(height=300, autosize=_fixed_height())
