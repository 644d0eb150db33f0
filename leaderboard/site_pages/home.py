"""Home: every board (leader, counts, what it was scored on), then every model × board with its rank, searchable."""

from __future__ import annotations

import polars as pl
import streamlit as st

from leaderboard import overview, sitedata, ui
from leaderboard.model import TaskInfo

PARAMS = ("q",)

st.title("procbench leaderboard")
st.caption("Procedural-text benchmarks scored exactly as their official scorers do; every per-item score is stored and can be sliced.")
db = ui.database()
ui.check_params(PARAMS)
tasks = ui.all_tasks(db)
ranks = overview.ranks(db)
counts = sitedata.home(db)  # every visible row once (a reported row without the primary metric counts too)
provenance = sitedata.all_provenance(db)

records = []
for row in tasks.iter_rows(named=True):
    info = TaskInfo.from_row(row)
    metric = info.primary_metric
    mine = ranks.filter((pl.col("task") == info.task) & (pl.col("split") == info.split)).sort("position")
    leader = mine.row(0, named=True) if mine.height and mine["rank"][0] is not None else None  # the board's first row
    listed = counts.filter((pl.col("task") == info.task) & (pl.col("split") == info.split))
    submitted = int((~listed["is_reference"]).sum()) if listed.height else 0
    source = provenance.get((info.task, info.split))
    records.append(
        {
            "Benchmark": info.benchmark,
            "Board": f"board?task={info.task}&split={info.split}",
            "Split": info.split + (" (hidden)" if info.hidden else ""),
            "Data": (source.label.removeprefix("scored on ") if source is not None else ""),
            "Primary metric": metric.display,
            "Leader": (leader["model"] + (" (reported)" if leader["kind"] == "reported" else "")) if leader else "",
            "Leader team": leader["team"] if leader else "",
            "Score": leader["shown"] if leader else None,
            "Submissions": submitted,
            "Reported rows": listed.height - submitted,
            "Last update": listed["created_at"].max() if listed.height else None,
        }
    )

table = pl.DataFrame(records, strict=False)
ui.table(
    table,
    column_config={
        "Board": st.column_config.LinkColumn("Task", display_text=r"task=([^&]+)", help="open the task's board"),
        "Score": st.column_config.NumberColumn(format="%.2f", help="the leader's primary metric (in % where the metric is a fraction)"),
        "Data": st.column_config.TextColumn(help="what the board's rows were scored on: the real split, or the bundled sample data"),
        "Last update": st.column_config.DatetimeColumn(format="YYYY-MM-DD", help="the newest row on the board"),
        "Leader": st.column_config.TextColumn(width=ui.text_px(table["Leader"].to_list()) if "Leader" in table.columns else "medium"),
        "Reported rows": st.column_config.NumberColumn("Reported", help="papers' rows on this board (reported on the same data)"),
    },
    key="boards",
)
st.caption(
    "Scores in % where the metric is a fraction. The leader is the board's first row; reported rows are the papers' numbers (no per-item data). "
    "Boards on sample data rank a handful of items: not comparable with published results."
)
ui.downloads(table, "procbench-home", key="home", note="")

st.subheader("Models × boards")
query = st.text_input("Search models", key="q", bind="query-params", placeholder="part of a model's name, e.g. bert")
grid = overview.matrix(db, query)
if grid.is_empty():
    st.info(f"No model on any board matches {ui.code(query)}." if query.strip() else "No rows on any board yet.")
else:
    boards = [c for c in grid.columns if c not in ("Model", "Page", "Boards")]
    # A board's header is its task alone where the task has one board here (the split is on the table above), so every
    # column fits at 1440 px without cutting a name; the tooltip gives the whole board.
    tasks_here = [b.split(" · ")[0] for b in boards]
    header = {b: t if tasks_here.count(t) == 1 else b for b, t in zip(boards, tasks_here)}
    ui.table(
        grid,
        column_config={
            "Model": st.column_config.TextColumn("Model", width=ui.text_px(grid["Model"].to_list(), max_px=320)),
            "Page": st.column_config.LinkColumn("Page", display_text="open", help="the model page: every task, rank and submission of this model"),
            "Boards": st.column_config.NumberColumn(help="the boards this model has a row on"),
            **{b: st.column_config.NumberColumn(header[b], format="#%d", help=f"best rank on the {b} board (– : not on it, or listed without a rank)")
               for b in boards},
        },
        key="models",
    )
    st.caption(f"{grid.height} model{'s' if grid.height != 1 else ''}; each cell is the model's best rank on that board (its primary metric).")
    ui.downloads(grid, "procbench-models", key="models", note="Ranks as on each board (1 = best), by its primary metric.")
