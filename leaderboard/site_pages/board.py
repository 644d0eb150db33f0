"""Task board: ranked submissions and reported rows, sliced, filtered, with intervals and tie groups."""

from __future__ import annotations

import streamlit as st

from leaderboard import boardview, config, ui

db = ui.database()
info = ui.pick_task(db)
sl, slice_value = ui.pick_slice(db, info)
groups = st.sidebar.multiselect("Metric groups", info.groups, default=info.groups, key="groups", bind="query-params")
metric_names = [m.name for m in info.metrics] or [info.primary]
sort_metric = ui.url_choice(
    st.sidebar, "Rank by", metric_names, index=metric_names.index(info.primary) if info.primary in metric_names else 0,
    key="sort", format_func=lambda n: info.metric(n).display,
)

with st.sidebar.expander("Filters", expanded=True):
    everything = boardview.build(db, info, sl=sl, slice_value=slice_value, interval_rows=0).facets
    kinds = st.multiselect("Kind", everything.get("kind", []), key="kind", bind="query-params", placeholder="all")
    access = st.multiselect("Open / closed", everything.get("access", []), key="access", bind="query-params", placeholder="all")
    families = st.multiselect("Method family", everything.get("family", []), key="family", bind="query-params", placeholder="all")
    teams = st.multiselect("Team", everything.get("team", []), key="team", bind="query-params", placeholder="all")
interval_rows = st.sidebar.number_input(
    "Bootstrap the top N rows", min_value=0, max_value=config.MAX_INTERVAL_ROWS, value=config.DEFAULT_INTERVAL_ROWS,
    key="ci", bind="query-params", help="95% intervals and the tie group are computed for this many submitted rows (cached per submission)",
)

st.header(info.title)
ui.task_caption(info)
if sl is not None:
    st.subheader(f"Slice: {sl.name} = {slice_value}")
    if not sl.per_item:
        st.caption("This slice re-scores every item against gold restricted to the slice's answers; the stored item scores are the whole split's, so it has no bootstrap intervals.")

filters = boardview.BoardFilters(tuple(kinds), tuple(access), tuple(families), tuple(teams))
with st.spinner("Bootstrapping the top rows…"):
    view = boardview.build(db, info, sl=sl, slice_value=slice_value, groups=groups, filters=filters, sort_metric=sort_metric, interval_rows=int(interval_rows))
if view.table.is_empty():
    st.info("No scores for this view yet.")
    st.stop()

st.dataframe(
    view.table,
    hide_index=True,
    width="stretch",
    column_config={
        "Details": st.column_config.LinkColumn("Details", display_text="open"),
        "Items": st.column_config.NumberColumn(help="items behind the figures of this row"),
        **{m.display: st.column_config.NumberColumn(format="%.2f") for m in info.metrics},
    },
)
metric = view.sort_metric
if view.leader is not None:
    tied = len(view.tied)
    st.caption(
        f"Tie group: {tied} submission{'s' if tied != 1 else ''} among the top {view.interval_rows} cannot be separated from the leader on {ui.escape(metric.display)} "
        f"by a paired bootstrap over items ({config.N_RESAMPLES} resamples, seed {config.SEED}, p ≥ {config.ALPHA}). "
        "Intervals are 95% percentile bootstrap intervals over items, recomputed with the task's own aggregator."
    )
if "Judged by" in view.table.columns:  # issue #17
    st.caption("*Self-judged*: the verdicts came with the submitted file, not from the board's own judge; those rows are ranked apart, in their own group after the others.")
st.caption("Scores in % where the metric is a fraction; *Items* is the number of items behind each row's figures; reported rows are the papers' numbers (no per-item data, no intervals).")
ui.downloads(view.export, ui.file_stem("board", info.task, info.split, sl.name if sl else "", slice_value), key="board")
