"""The procbench leaderboard (Streamlit).  Reads the store only; run with ``procbench leaderboard``."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import streamlit as st

from leaderboard import queries

st.set_page_config(page_title="procbench leaderboard", layout="wide")

DB = Path(os.environ.get("PROCBENCH_DB", "var/procbench.duckdb"))


def main() -> None:
    st.title("procbench leaderboard")
    if not DB.exists():
        st.error(f"No database at {DB}. Build one with `procbench demo` or `procbench submit`.")
        return
    tasks = queries.tasks(DB)
    if tasks.is_empty():
        st.info("No submissions yet.")
        return
    params = st.query_params
    names = list(dict.fromkeys(tasks["task"].to_list()))
    task = st.sidebar.selectbox("Task", names, index=names.index(params["task"]) if params.get("task") in names else 0)
    splits = tasks.filter(pl.col("task") == task)["split"].to_list()
    split = st.sidebar.selectbox("Split", splits, index=splits.index(params["split"]) if params.get("split") in splits else 0)
    row = tasks.filter((pl.col("task") == task) & (pl.col("split") == split)).row(0, named=True)
    spec = queries.spec_of(row)
    metrics = spec["metrics"]
    groups = list(dict.fromkeys(m["group"] or "metrics" for m in metrics))
    chosen_groups = st.sidebar.multiselect("Metric groups", groups, default=groups)

    slices = [s["name"] for s in spec["slices"]]
    slice_name = st.sidebar.selectbox("Slice", ["(whole split)", *slices], index=(slices.index(params["slice"]) + 1) if params.get("slice") in slices else 0)
    slice_value = ""
    if slice_name != "(whole split)":
        values = queries.slice_values(DB, task, split, slice_name)
        slice_value = st.sidebar.selectbox("Slice value", values, index=values.index(params["value"]) if params.get("value") in values else 0) if values else ""
    else:
        slice_name = ""
    st.query_params.update({"task": task, "split": split, **({"slice": slice_name, "value": slice_value} if slice_name else {})})

    st.header(spec["title"])
    st.caption(f"task `{task}` · split `{split}` · version {spec['version']} · fingerprint `{row['fingerprint'][:12]}` · licence {spec['license'] or 'n/a'}")
    if slice_name:
        st.subheader(f"Slice: {slice_name} = {slice_value}")
    frame = queries.board(DB, task, split, slice_name, slice_value)
    if frame.is_empty():
        st.info("No scores for this view yet.")
        return
    shown = [m for m in metrics if (m["group"] or "metrics") in chosen_groups and m["name"] in frame.columns]
    primary = spec["primary"]
    if primary in frame.columns:
        frame = frame.sort(primary, descending=True, nulls_last=True)
    table = frame.select(
        pl.col("model").alias("Model"),
        pl.col("team").alias("Team"),
        pl.when(pl.col("is_reference")).then(pl.lit("reported")).otherwise(pl.lit("submitted")).alias("Kind"),
        pl.col("n_items").alias("Items"),
        *[(pl.col(m["name"]) * (100 if m["percent"] else 1)).round(2).alias(m["display"]) for m in shown],
    )
    table = table.with_row_index("Rank", offset=1)
    st.dataframe(table, hide_index=True, width="stretch")
    st.caption("Scores in % where the metric is a fraction; reported rows are the papers' numbers (no per-item data).")
    with st.expander("About this task"):
        st.text(spec["description"])
        if spec["citation"]:
            st.code(spec["citation"], language="bibtex")


main()
