"""Home: every board (leader, counts, what it was scored on), then every model × board with its rank, searchable."""

from __future__ import annotations

import polars as pl
import streamlit as st

from procbench.leaderboard import boardlayout, overview, sitedata, ui
from procbench.leaderboard.model import TaskInfo
from procbench.leaderboard.queries import BoardProvenance

PARAMS = ("q", "more", "boards")
ALL_BENCHMARKS = "every benchmark"
MORE = (
    "Benchmark",
    "Leader team",
    "Reported on slices only",
    "Last update",
)  # on demand: the default columns fit 1400 px without scrolling


def data_label(source: BoardProvenance | None) -> str:
    """A board's data in a few words: ``real · 560 items``, ``sample · 8 items`` (the board's title says it in full)."""
    if source is None:
        return ""
    kind = {"real": "real split", "sample": "bundled sample"}.get(
        source.data_kind, source.data_kind
    )
    return kind + (f" · {source.gold_items} items" if source.gold_items is not None else "")


st.title("procbench leaderboard")
st.caption(
    "Procedural-text benchmarks scored exactly as their official scorers do; every per-item score is stored and can be sliced."
)
db = ui.database()
ui.check_params(PARAMS)
# what this page reads, and the reads of the boards it builds again (those a write touched), in one attachment of the
# store (issue #31: one each cost ~0.03 s at 100k)
overview.prefetch_home(db)
ui.computing_note(db)
tasks = ui.all_tasks(db)
ranks = overview.ranks(db)
# per board: its visible rows (a reported row without the primary metric counts too), submitted ones, last update;
# from the maintained summary (migration 010), so the first view after a write reads no submission's rows
counts = {(r["task"], r["split"]): r for r in sitedata.home_counts(db).iter_rows(named=True)}
provenance = sitedata.all_provenance(db)

infos = [TaskInfo.from_row(row) for row in tasks.iter_rows(named=True)]
records = []
stored: list[
    float | None
] = []  # each leader's stored value (a fraction for a % metric): what the download holds
for info in infos:
    metric = info.primary_metric
    mine = ranks.filter((pl.col("task") == info.task) & (pl.col("split") == info.split)).sort(
        "position"
    )
    leader = (
        mine.row(0, named=True) if mine.height and mine["rank"][0] is not None else None
    )  # the board's first row
    stored.append(leader["value"] if leader else None)
    listed = counts.get((info.task, info.split), {})
    submitted = int(listed.get("submitted") or 0)
    on_board = int(
        (mine["kind"] == "reported").sum()
    )  # papers' rows on the whole-split board (the board's own count)
    source = provenance.get((info.task, info.split))
    records.append(
        {
            "Benchmark": info.benchmark,
            "Board": f"board?task={info.task}&split={info.split}",
            "Split": info.split + (" (hidden)" if info.hidden else ""),
            "Data": data_label(source),
            "Primary metric": metric.display,
            "Leader": (leader["model"] + (" (reported)" if leader["kind"] == "reported" else ""))
            if leader
            else "",
            "Leader team": leader["team"] if leader else "",
            "Score": leader["shown"] if leader else None,
            "Submissions": submitted,
            "Reported rows": on_board,
            "Reported on slices only": int(listed.get("listed") or 0) - submitted - on_board,
            "Last update": listed.get("last_update"),
        }
    )

table = pl.DataFrame(records, strict=False)
more = st.toggle(
    "More columns (benchmark, leader's team, papers' slice-only rows, last update)",
    value=False,
    key="more",
    bind="query-params",
)
ui.table(
    table,
    column_order=[c for c in table.columns if more or c not in MORE],
    column_config={
        "Board": st.column_config.LinkColumn(
            "Task", display_text=r"task=([^&]+)", help="open the task's board"
        ),
        "Score": st.column_config.NumberColumn(
            format="%.2f", help="the leader's primary metric (in % where the metric is a fraction)"
        ),
        "Data": st.column_config.TextColumn(
            help="what the board's rows were scored on (real: the published split, checked against the data lock; sample: the bundled demo items) and its items"
        ),
        "Last update": st.column_config.DatetimeColumn(
            format="YYYY-MM-DD", help="the newest row on the board"
        ),
        "Leader": st.column_config.TextColumn(
            width=ui.text_px(table["Leader"].to_list(), max_px=380)
            if "Leader" in table.columns
            else "medium"
        ),
        "Reported rows": st.column_config.NumberColumn(
            "Reported", help="papers' rows on the board's whole split (reported on the same data)"
        ),
        "Reported on slices only": st.column_config.NumberColumn(
            "Reported on slices",
            help="papers' rows reported on slices only: listed on the board's slice views, not on its whole split",
        ),
    },
    key="boards",
)
st.caption(
    "Scores in % where the metric is a fraction. The leader is the board's first row; reported rows are the papers' numbers (no per-item data). "
    "Boards on sample data rank a handful of items: not comparable with published results."
)
variants = overview.variants(infos)
if variants:
    st.caption(
        "Boards of one benchmark that score differently: "
        + "; ".join(f"`{c}` is `{p}` scored {ui.escape(how)}" for c, p, how in variants)
        + "."
    )
# issue #30: downloads hold stored values everywhere (fractions for a % metric, as the board's and Downloads' files), never the % shown
ui.downloads(
    table.with_columns(pl.Series("Score", stored, dtype=pl.Float64)), "procbench-home", key="home"
)

st.subheader("Models × boards")
query = st.text_input(
    "Search models", key="q", bind="query-params", placeholder="part of a model's name, e.g. bert"
)
names = overview.benchmarks(db)
options = [ALL_BENCHMARKS, *names]
asked = st.query_params.get("boards")
if asked is not None and asked not in options:
    st.warning(
        f"Unknown benchmark {ui.code(asked)} in the address (`boards`): showing {ui.code(ALL_BENCHMARKS)} instead."
    )
    st.query_params["boards"] = ALL_BENCHMARKS
chosen = st.radio(
    "Columns",
    options,
    horizontal=True,
    key="boards",
    bind="query-params",
    help="every benchmark: the model's best rank on any board of it (fits the page); a benchmark: one column per board",
)
benchmark = "" if chosen in (None, ALL_BENCHMARKS) else str(chosen)
grid = overview.matrix(db, query, benchmark)
if grid.is_empty():
    st.info(
        f"No model on any board matches {ui.code(query)}."
        if query.strip()
        else "No rows on any board yet."
    )
else:
    columns = [c for c in grid.columns if c not in ("Model", "Page", "Boards")]
    boards_in = {b: overview.boards_of(db, b) for b in names}
    if benchmark:
        # a board's header is its task alone where the task has one board here (the split is in the table above)
        tasks_here = [c.split(" · ")[0] for c in columns]
        header = {c: t if tasks_here.count(t) == 1 else c for c, t in zip(columns, tasks_here)}
        helps = {
            c: f"rank on the {c} board of its ranked rows, by {', '.join(overview.metrics_of(db, c, benchmark))}, and the value (– : not on it)"
            for c in columns
        }
    else:
        header = {c: c for c in columns}
        helps = {
            c: f"best rank on any {c} board ({', '.join(boards_in.get(c, []))}) of its ranked rows, by {', '.join(overview.metrics_of(db, c))}, "
            "and the value; the board is named where the benchmark has several (– : on none)"
            for c in columns
        }
    # issue #30 (real-data review): the cells ('#11 of 18 · 26.00 % on paradise-reverse-warning') were cut at 1400 px
    # while Page and Boards took 110 px each; those two are narrow now, and the rank columns share what is left of
    # the 1400-px budget in proportion to their longest cell (each cell's text is also its tooltip)
    model_px = ui.text_px(grid["Model"], max_px=260)
    wanted = {c: ui.text_px(grid[c], min_px=90, max_px=380) for c in columns}
    room = (
        boardlayout.HOME_GRID_PX - model_px - boardlayout.HOME_PAGE_PX - boardlayout.HOME_BOARDS_PX
    )
    scale = min(1.0, room / sum(wanted.values())) if wanted else 1.0
    cell_px = {c: int(w * scale) for c, w in wanted.items()}
    ui.table(
        grid,
        column_config={
            "Model": st.column_config.TextColumn("Model", width=model_px),
            "Page": st.column_config.LinkColumn(
                "Page",
                display_text="open",
                width=boardlayout.HOME_PAGE_PX,
                help="the model page: every task, rank and submission of this model",
            ),
            "Boards": st.column_config.NumberColumn(
                width=boardlayout.HOME_BOARDS_PX,
                help="the boards this model has a row on (of every benchmark)",
            ),
            **{
                c: st.column_config.TextColumn(header[c], help=helps[c], width=cell_px[c])
                for c in columns
            },
        },
        key="models",
    )
    scope = (
        f"its rank on each board of {ui.escape(benchmark)}"
        if benchmark
        else "its best rank on any board of that benchmark (choose a benchmark above for each board)"
    )
    by = "; ".join(
        f"{ui.escape(header[c])}: {ui.escape(', '.join(overview.metrics_of(db, c, benchmark)))}"
        for c in columns
    )
    st.caption(
        f"{grid.height} model{'s' if grid.height != 1 else ''}; each cell is {scope} — the rank of the board's ranked rows · the value of its "
        f"ranking metric ({by}); *only row* where the model is the board's only ranked row (first of one, not a leader)."
    )
    ui.downloads(
        grid,
        ui.file_stem("procbench-models", benchmark),
        key="models",
        note="Ranks as on each board (1 = best), by its primary metric.",
    )
