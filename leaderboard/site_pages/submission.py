"""Submission: its metadata, every metric and slice (with intervals), and its status history."""

from __future__ import annotations

import polars as pl
import streamlit as st

from leaderboard import analysis, config, metadata, queries, ui
from leaderboard.model import TaskInfo

db = ui.database()
sid = st.text_input("Submission id", key="id", bind="query-params", placeholder="paste an id, or open one from a board").strip()
if not sid:
    st.info("Open a submission from a board (its *Details* link) or paste its id.")
    st.stop()
row = queries.submission(db, sid)
if row is None:
    st.error("No visible submission with this id.")
    st.stop()

info = TaskInfo.from_row({**row, "primary_metric": None, "hidden": row["hidden_split"]})
st.header(ui.escape(row["model"]), anchor=False)
size = "reported row (paper numbers, no items)" if row["is_reference"] else f"{row['n_items']} items"
st.caption(
    f"team {ui.escape(row['team'])} · task {ui.code(row['task'])} · split {ui.code(row['split'])} · "
    f"{size} · submitted {row['created_at']:%Y-%m-%d %H:%M} UTC · id {ui.code(sid)}"
)
if not row["current"]:
    st.warning("Scored under an earlier version of this task (another fingerprint): it is kept, but not on the current board.")
st.page_link("site_pages/board.py", label="Open the task's board", query_params={"task": row["task"], "split": row["split"]})

st.subheader("Metadata")
facets = metadata.facets(row["metadata_json"], row["is_reference"])
st.dataframe(pl.DataFrame({"facet": ["kind", "open / closed", "method family"], "value": [facets.kind, facets.access, facets.family]}), hide_index=True)
st.json(metadata.parse(row["metadata_json"]), expanded=True)

st.subheader("Metrics")
aggregates = queries.aggregates(db, sid)
whole = aggregates.filter(pl.col("slice") == "")
stored = dict(zip(whole["metric"], whole["value"]))
boot = analysis.bootstrap_of(db, info, sid) if row["current"] and not row["is_reference"] else None
metric_rows = []
for m in info.metrics:
    if m.name not in stored:
        continue
    found = analysis.interval(boot, m.name)
    metric_rows.append(
        {
            "Metric": m.display,
            "Group": m.group,
            "Value": m.shown(stored[m.name]),
            "95% CI": f"{m.shown(found.low):.2f} – {m.shown(found.high):.2f}" if found else "",
            "Items": found.n_items if found else (None if row["is_reference"] else row["n_items"]),
            "Primary": "yes" if m.name == info.primary else "",
        }
    )
metrics_frame = pl.DataFrame(metric_rows, strict=False)
st.dataframe(metrics_frame, hide_index=True, width="stretch")
st.caption(f"Intervals: 95% percentile bootstrap over items ({config.N_RESAMPLES} resamples, seed {config.SEED}), re-aggregated with the task's own aggregator.")

st.subheader("Slices")
sliced = aggregates.filter(pl.col("slice") != "")
if sliced.is_empty():
    st.caption("No slice figures.")
else:
    wide = sliced.pivot(on="metric", index=["slice", "slice_value", "n_items"], values="value").sort(["slice", "slice_value"])
    shown = [m for m in info.metrics if m.name in wide.columns]
    st.dataframe(
        wide.select(
            pl.col("slice").alias("Slice"), pl.col("slice_value").alias("Value"), pl.col("n_items").alias("Items"),
            *[(pl.col(m.name) * (100 if m.percent else 1)).round(2).alias(m.display) for m in shown],
        ),
        hide_index=True,
        width="stretch",
    )

st.subheader("Status history")
history = queries.status_history(db, sid)
st.dataframe(history.rename({"status": "Status", "reason": "Reason", "changed_at": "When (UTC)"}), hide_index=True, width="stretch")
ui.downloads(aggregates, ui.file_stem("submission", sid), key="submission")
