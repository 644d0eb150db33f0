"""Home: every task with its leader, number of submissions, primary metric and last update."""

from __future__ import annotations

import polars as pl
import streamlit as st

from leaderboard import metadata, queries, ui
from leaderboard.model import TaskInfo
from submissions.judging import SELF, judged_by

st.title("procbench leaderboard")
st.caption("Procedural-text benchmarks scored exactly as their official scorers do; every per-item score is stored and can be sliced.")
db = ui.database()
tasks = ui.all_tasks(db)
rows = queries.home(db)

records = []
for row in tasks.iter_rows(named=True):
    info = TaskInfo.from_row(row)
    metric = info.primary_metric
    mine = rows.filter((pl.col("task") == info.task) & (pl.col("split") == info.split))
    # issue #17: as on the board, rows with the submitter's own verdicts rank after the others
    mine = mine.with_columns(pl.Series("self_judged", [judged_by(metadata.parse(m)) == SELF for m in mine["metadata_json"]], dtype=pl.Boolean))
    ordered = mine.sort(["self_judged", "value", "created_at"], descending=[False, metric.higher_is_better, False], nulls_last=True)
    leader = ordered.row(0, named=True) if ordered.height else None
    submitted = mine.filter(~pl.col("is_reference"))
    records.append(
        {
            "Benchmark": info.benchmark,
            "Board": f"board?task={info.task}&split={info.split}",
            "Split": info.split + (" (hidden)" if info.hidden else ""),
            "Primary metric": metric.display,
            "Leader": (leader["model"] + (" (reported)" if leader["is_reference"] else "") + (" (self-judged)" if leader["self_judged"] else "")) if leader else "",
            "Leader team": leader["team"] if leader else "",
            "Score": metric.shown(leader["value"]) if leader else None,
            "Submissions": submitted.height,
            "Reported rows": mine.height - submitted.height,
            "Last update": mine["created_at"].max() if mine.height else None,
        }
    )

table = pl.DataFrame(records, strict=False)
st.dataframe(
    table,
    hide_index=True,
    width="stretch",
    column_config={
        "Board": st.column_config.LinkColumn("Task", display_text=r"task=([^&]+)", help="open the task's board"),
        "Score": st.column_config.NumberColumn(format="%.2f"),
        "Last update": st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm"),
    },
)
st.caption("Scores in % where the metric is a fraction. The leader is the board's first row; reported rows are the papers' numbers (no per-item data).")
ui.downloads(table, "procbench-home")
