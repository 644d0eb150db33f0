"""Downloads: the current board view (task, split, slice, filters, sort) as CSV and JSON."""

from __future__ import annotations

import streamlit as st

from procbench.leaderboard import boardview, config, ui

db = ui.database()
ui.check_params(
    ("task", "split", "slice", "value", "sort", "kind", "access", "family", "size", "team", "ci")
)
info = ui.pick_task(db)
sl, slice_value = ui.pick_slice(db, info)
metric_names = [m.name for m in info.metrics] or [info.primary]
sort_metric = ui.url_choice(
    st.sidebar,
    "Rank by",
    metric_names,
    index=metric_names.index(info.primary) if info.primary in metric_names else 0,
    key="sort",
    format_func=lambda n: info.metric(n).display,
)
facets = boardview.view(db, info, sl=sl, slice_value=slice_value, interval_rows=0).facets
ui.note_unknown_values(
    {  # as the Board page: a mistyped filter value is named, never dropped silently
        "kind": ("kind", facets.get("kind", [])),
        "access": ("open / closed", facets.get("access", [])),
        "family": ("method family", facets.get("family", [])),
        "team": ("team", facets.get("team", [])),
        "size": ("size class", facets.get("size", [])),
    }
)
ui.note_bad_whole_number(
    "ci", "Bootstrap the top N rows", 0, config.MAX_INTERVAL_ROWS, config.DEFAULT_INTERVAL_ROWS
)
kinds = st.sidebar.multiselect(
    "Kind", facets.get("kind", []), key="kind", bind="query-params", placeholder="all"
)
access = st.sidebar.multiselect(
    "Open / closed", facets.get("access", []), key="access", bind="query-params", placeholder="all"
)
families = st.sidebar.multiselect(
    "Method family", facets.get("family", []), key="family", bind="query-params", placeholder="all"
)
teams = st.sidebar.multiselect(
    "Team", facets.get("team", []), key="team", bind="query-params", placeholder="all"
)
sizes = st.sidebar.multiselect(
    "Size class", facets.get("size", []), key="size", bind="query-params", placeholder="all"
)
interval_rows = st.sidebar.number_input(
    "Bootstrap the top N rows",
    min_value=0,
    max_value=config.MAX_INTERVAL_ROWS,
    value=config.DEFAULT_INTERVAL_ROWS,
    key="ci",
    bind="query-params",
)

st.header(f"Downloads — {info.title}")
ui.task_caption(info)
filters = boardview.BoardFilters(
    tuple(kinds), tuple(access), tuple(families), tuple(teams), tuple(sizes)
)
with st.spinner("Building the view…"):
    view = boardview.view(
        db,
        info,
        sl=sl,
        slice_value=slice_value,
        filters=filters,
        sort_metric=sort_metric,
        interval_rows=int(interval_rows),
    )
if view.export.is_empty():
    st.info("No rows in this view.")
    st.stop()
where = f"{sl.name} = {slice_value}" if sl else "the whole split"
st.write(
    f"{view.n_rows} rows on {ui.escape(where)}, ranked by {ui.escape(view.sort_metric.display)}; raw values (fractions, not %), 95% bootstrap interval bounds "
    f"for the top {view.interval_rows} submitted rows, and the p-value against the leader for tied rows."
)
ui.downloads(
    view.export,
    ui.file_stem("procbench", info.task, info.split, sl.name if sl else "", slice_value),
    key="downloads",
)
ui.table(view.export, key="export")
