"""The public submission ledger (issue #34): per team and model, attempts, refusals, hidden and retracted rows.

Counts, dates and the operators' reasons only (``procbench.submissions.ledger``): no figure, no submission id, no
refusal's own reason, so a hidden split shows nothing here beyond what its board shows.
"""

from __future__ import annotations

import polars as pl
import streamlit as st

from procbench.leaderboard import sitedata, ui
from procbench.submissions.ledger import with_events

PARAMS = ("team", "model")

db = ui.database()
ui.check_params(PARAMS)
found = sitedata.ledger(db)
st.header("Submission ledger", anchor=False)
st.caption(
    "Per team, model, task and split: every attempt that reached the scorer (stored files and files refused at validation or scoring, "
    "as the attempt quota counts them), the submissions hidden or retracted since, and each hide, retraction or restoration with its "
    "date and the operator's reason. No scores are shown here: a hidden split publishes nothing through this page beyond its board."
)
if found.summary.is_empty():
    st.info("No submissions yet.")
    st.stop()
teams = st.multiselect(
    "Team",
    sorted(set(found.summary["team"].to_list())),
    key="team",
    bind="query-params",
    placeholder="all",
)
models = st.multiselect(
    "Model",
    sorted(set(found.summary["model"].to_list())),
    key="model",
    bind="query-params",
    placeholder="all",
)


def chosen(frame: pl.DataFrame) -> pl.DataFrame:
    if teams:
        frame = frame.filter(pl.col("team").is_in(teams))
    if models:
        frame = frame.filter(pl.col("model").is_in(models))
    return frame


summary = chosen(found.summary)
totals = summary.select(pl.col("attempts", "refused", "hidden", "retracted").sum()).row(0)
st.caption(
    f"{summary.height} row{'s' if summary.height != 1 else ''} · {totals[0]} attempts · {totals[1]} refused · {totals[2]} hidden · {totals[3]} retracted"
)
ui.table(
    summary.select(
        pl.col("team").alias("Team"),
        pl.col("model").alias("Model"),
        pl.col("task").alias("Task"),
        pl.col("split").alias("Split"),
        pl.col("attempts").alias("Attempts"),
        pl.col("stored").alias("Stored"),
        pl.col("refused").alias("Refused"),
        pl.col("hidden").alias("Hidden"),
        pl.col("retracted").alias("Retracted"),
        pl.col("first_at").dt.strftime("%Y-%m-%d").alias("First"),
        pl.col("last_at").dt.strftime("%Y-%m-%d").alias("Latest"),
    ),
    column_config={
        "Attempts": st.column_config.NumberColumn(
            help="stored files plus files refused at validation or scoring (as the attempt quota counts them)"
        ),
        "Refused": st.column_config.NumberColumn(
            help="files refused at validation or scoring (their reasons stay with the submitter's receipt)"
        ),
        "Hidden": st.column_config.NumberColumn(
            help="stored submissions hidden from the board now"
        ),
        "Retracted": st.column_config.NumberColumn(
            help="stored submissions deleted (retracted) now; kept in the store, never shown"
        ),
    },
    key="ledger-summary",
)
events = chosen(found.events)
st.subheader("Hidden, retracted and restored", anchor=False)
if events.is_empty():
    st.caption("None.")
else:
    ui.table(
        events.select(
            pl.col("at").dt.strftime("%Y-%m-%d %H:%M").alias("Date"),
            pl.col("team").alias("Team"),
            pl.col("model").alias("Model"),
            pl.col("task").alias("Task"),
            pl.col("split").alias("Split"),
            pl.col("action").alias("Action"),
            pl.col("reason").alias("Reason"),
        ),
        key="ledger-events",
    )
# the same table as `procbench export ledger --out FILE.csv`: the summary with each row's events in one column
ui.downloads(chosen(with_events(found)), ui.file_stem("ledger", *teams), key="ledger", note="")
