"""Charts: per-slice bars, a radar of the metric groups, seen vs unseen scatter."""

from __future__ import annotations

import polars as pl
import streamlit as st

from leaderboard import analysis, plots, queries, ui
from leaderboard.model import TaskInfo

TOP_SYSTEMS = 6
MAX_RADAR_AXES = 12

db = ui.database()
info: TaskInfo = ui.pick_task(db)
st.header(f"Charts — {info.title}")
ui.task_caption(info)

candidates = queries.submissions_of(db, info.task, info.split)
primary = info.primary_metric
candidates = candidates.sort("primary_value", descending=primary.higher_is_better, nulls_last=True)
labels = {r["submission_id"]: ui.submission_label(r) for r in candidates.iter_rows(named=True)}
ids = list(labels)
systems = ui.url_multi(st.sidebar, "Systems", ids, key="systems", default=ids[:TOP_SYSTEMS], format_func=lambda s: labels.get(s, s))
metric_names = [m.name for m in info.metrics] or [info.primary]
metric_name = ui.url_choice(st.sidebar, "Metric", metric_names, index=metric_names.index(info.primary) if info.primary in metric_names else 0, key="metric", format_func=lambda n: info.metric(n).display)
metric = info.metric(metric_name)
names = {sid: labels[sid].split(" (")[0] for sid in systems}
if not systems:
    st.info("Choose systems in the sidebar.")
    st.stop()

# -- per-slice bars -------------------------------------------------------------------------------
st.subheader("Per-slice bars")
if not info.slices:
    st.caption("This task declares no slices.")
else:
    slice_names = [s.name for s in info.slices]
    bar_slice = ui.url_choice(st, "Slice dimension", slice_names, key="bars", format_func=lambda n: f"{n}: {info.slice(n).display}")  # type: ignore[union-attr]
    with_ci = st.toggle("95% bootstrap error bars", value=False, key="errorbars", bind="query-params", help="recomputed with the task's aggregator over each slice's items; slow on first view, then cached")
    sl = info.slice(bar_slice)
    long = queries.slice_table(db, info.task, info.split, bar_slice, systems).filter(pl.col("metric") == metric.name)
    rows = []
    for r in long.iter_rows(named=True):
        low = high = None
        if with_ci and not r["is_reference"]:
            found = analysis.interval(analysis.bootstrap_of(db, info, r["submission_id"], sl, r["slice_value"]), metric.name)
            if found is not None:
                low, high = metric.shown(found.low), metric.shown(found.high)
        rows.append({"system": names.get(r["submission_id"], r["model"]), "slice_value": r["slice_value"], "value": metric.shown(r["value"]), "n_items": r["n_items"], "low": low, "high": high})
    if rows:
        frame = pl.DataFrame(rows, schema={"system": pl.String, "slice_value": pl.String, "value": pl.Float64, "n_items": pl.Int64, "low": pl.Float64, "high": pl.Float64})
        st.altair_chart(plots.slice_bars(frame, metric.display + (" (%)" if metric.percent else "")), width="stretch")
        counts = frame.group_by("slice_value").agg(pl.col("n_items").max()).sort("slice_value")
        st.caption("Items per slice value: " + ", ".join(f"{ui.escape(v)} = {n}" for v, n in counts.iter_rows()))
    else:
        st.caption("No slice figures stored for these systems.")

# -- radar of metric groups -----------------------------------------------------------------------
st.subheader("Radar of metric groups")
default_groups: list[str] = []
axes_count = 0
for group in info.groups:
    size = sum(1 for m in info.metrics if m.group == group)
    if axes_count + size > MAX_RADAR_AXES:
        break
    default_groups.append(group)
    axes_count += size
radar_groups = st.multiselect("Metric groups on the radar", info.groups, default=default_groups, key="radar", bind="query-params")
axes = [m for m in info.metrics if m.group in radar_groups]
if len(axes) < 3:
    st.caption("A radar needs at least three metrics: choose more groups.")
else:
    whole = queries.slice_table(db, info.task, info.split, "", systems)
    values = {(r["submission_id"], r["metric"]): r["value"] for r in whole.iter_rows(named=True)}
    scale = max([1.0, *(float(values[(sid, m.name)]) for sid in systems for m in axes if values.get((sid, m.name)) is not None)])
    points = [
        {"system": names.get(sid, sid), "axis": m.display, "value": (values.get((sid, m.name)) or 0.0) / scale}
        for sid in systems
        for m in axes
    ]
    chart = plots.radar(pl.DataFrame(points, schema={"system": pl.String, "axis": pl.String, "value": pl.Float64}), [m.display for m in axes])
    st.altair_chart(chart)
    st.caption("Whole-split values" + (f", divided by {scale:g} so the largest reaches the rim" if scale > 1 else " on a 0–1 scale") + ".")

# -- seen vs unseen -------------------------------------------------------------------------------
st.subheader("Seen vs unseen")
pairs = [s for s in info.slices if len(queries.slice_values(db, info.task, info.split, s.name)) == 2]
if not pairs:
    st.caption("No slice of this task has exactly two values (OpenPI's `domain` slice compares seen and unseen categories).")
else:
    pair_names = [s.name for s in pairs]
    default = pair_names.index("domain") if "domain" in pair_names else 0
    pair = st.selectbox("Two-valued slice", pair_names, index=default, key="pair", bind="query-params")
    first, second = queries.slice_values(db, info.task, info.split, pair)
    if pair == "domain" and {first, second} == {"seen", "unseen"}:
        first, second = "seen", "unseen"
    long = queries.slice_table(db, info.task, info.split, pair, systems).filter(pl.col("metric") == metric.name)
    points = {}
    for r in long.iter_rows(named=True):
        entry = points.setdefault(r["submission_id"], {"system": names.get(r["submission_id"], r["model"]), "x": None, "y": None, "n_x": None, "n_y": None})
        axis = "x" if r["slice_value"] == first else "y"
        entry[axis] = metric.shown(r["value"])
        entry[f"n_{axis}"] = r["n_items"]
    frame = pl.DataFrame(list(points.values()), schema={"system": pl.String, "x": pl.Float64, "y": pl.Float64, "n_x": pl.Int64, "n_y": pl.Int64}).drop_nulls(["x", "y"])
    if frame.is_empty():
        st.caption("No system has figures on both values.")
    else:
        st.altair_chart(plots.seen_unseen(frame, f"{metric.display} on {first}", f"{metric.display} on {second}"), width="stretch")
        st.caption("Points below the dashed diagonal do worse on the second value than on the first.")
