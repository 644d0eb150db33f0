"""A model across every board: its rank and primary value on each task, its submissions and its model card."""

from __future__ import annotations

import polars as pl
import streamlit as st

from procbench.leaderboard import metadata, overview, sitedata, ui

PARAMS = ("model", "contamination", "q")

db = ui.database()
ui.check_params(PARAMS)
if not overview.model_count(db):
    st.info("No rows on any board yet.")
    st.stop()
asked = st.query_params.get("model")
cap = overview.MODEL_CHOICES_CAP
large = overview.model_count(db) > cap
query = ""
if large:
    # too many names to send to the browser (overview.MODEL_CHOICES_CAP): the server searches, the selector lists
    # the first matches (and the address's model, so a link keeps working)
    query = st.text_input(
        "Search models",
        key="q",
        bind="query-params",
        placeholder="part of a model's name, e.g. bert",
    ).strip()
names, matched = overview.model_choices_of(db, query, asked)
if asked is not None and asked not in names:  # a model on a board is always among the choices
    st.error(
        f"No model named {ui.code(asked)} on any board. Search for one {'above' if large else 'below'}."
    )
model = st.selectbox(
    "Model",
    names,
    index=names.index(asked) if asked in names else None,
    placeholder="type to filter the models listed…"
    if large
    else "type to search every model on every board…",
    key="model-search",
)
if large:
    st.caption(
        (
            f"{matched} model{'s match' if matched != 1 else ' matches'} {ui.code(query)}"
            if query
            else f"{matched} models"
        )
        + (
            f": only the first {cap} (best-ranked first) are listed; search to narrow them"
            if matched > cap
            else ""
        )
        + "."
    )
if model is None:
    st.stop()
st.query_params["model"] = model

rows = overview.of_model(db, model)
# issue #34: each row's contamination mark (its model card: a row's card is per submission, so per board)
cards = [metadata.card(sitedata.card_of(db, sid)) for sid in rows["submission_id"]]
rows = rows.with_columns(
    pl.Series(
        "contamination",
        [metadata.CONTAMINATION_WORDS.get(c.contamination, c.contamination) for c in cards],
        dtype=pl.String,
    ),
    pl.Series("contamination_mark", [c.contamination_mark for c in cards], dtype=pl.String),
)
chosen = st.multiselect(
    "Contamination",
    sorted(set(rows["contamination"].to_list())),
    key="contamination",
    bind="query-params",
    placeholder="all",
    help="the model card's word on the model's known exposure to each board's data",
)
if chosen:
    rows = rows.filter(pl.col("contamination").is_in(chosen))
marked = rows.filter(pl.col("contamination").is_in(["suspected", "confirmed"]))
if marked.height:
    st.warning(
        f"{marked.height} row{'s' if marked.height != 1 else ''} of this model {'are' if marked.height != 1 else 'is'} marked as possibly contaminated "
        "(the model card says the model saw the benchmark's data): "
        + "; ".join(
            ui.escape(f"{b}: {m}")
            for b, m in marked.select("board", "contamination_mark").iter_rows()
        )
    )
st.header(ui.escape(model), anchor=False)
ranked = rows.filter(pl.col("rank").is_not_null())
st.caption(
    f"{rows['board'].n_unique()} board{'s' if rows['board'].n_unique() != 1 else ''} · {rows.height} row{'s' if rows.height != 1 else ''}"
    + (f" · best rank #{int(ranked['rank'].min())}" if ranked.height else "")  # type: ignore[arg-type]  # a rank column: ints
)

table = rows.select(
    pl.col("board").alias("Board"),
    pl.col("rank").alias("Rank"),
    pl.col("ranked").alias("Ranked rows"),
    pl.col("metric").alias("Primary metric"),
    pl.col("shown").alias("Value"),
    pl.col("unit").alias("Unit"),
    pl.col("coverage").alias("Coverage"),
    pl.col("team").alias("Team"),
    pl.col("kind").alias("Kind"),
    pl.col("contamination_mark").alias("Contamination"),
    pl.col("created_at").dt.strftime("%Y-%m-%d").alias("Submitted"),
    pl.concat_str(pl.lit("board?task="), pl.col("task"), pl.lit("&split="), pl.col("split")).alias(
        "Board page"
    ),
    pl.concat_str(pl.lit("submission?id="), pl.col("submission_id")).alias("Details"),
)
ui.table(
    table,
    column_config={
        "Rank": st.column_config.NumberColumn(
            format="#%d",
            help="rank on that board by its primary metric (– : listed, not ranked: a paper without it, a partial file)",
        ),
        "Coverage": st.column_config.TextColumn(
            help="items with a prediction / items of the split; 'partial': the file left items out"
        ),
        "Value": st.column_config.NumberColumn(
            format="%.2f", help="the primary metric, in % where the metric is a fraction (see Unit)"
        ),
        "Unit": st.column_config.TextColumn(
            help="%: a fraction shown ×100; own unit: the metric's own scale (e.g. points, counts)"
        ),
        "Board page": st.column_config.LinkColumn("Board page", display_text="board"),
        "Details": st.column_config.LinkColumn("Details", display_text="open"),
    },
    key="model-rows",
)
st.caption(
    "Ranks are the boards' own (primary metric, no filters); a reported row is a paper's number, a submitted row a scored file."
)
ui.downloads(
    rows.select(
        "task",
        "split",
        "submission_id",
        "team",
        "kind",
        "contamination",
        "rank",
        "ranked",
        "metric",
        "value",
        "coverage",
        "created_at",
    ),
    ui.file_stem("model", model),
    key="model",
)

st.subheader("Model cards")
for task, split, sid in rows.select("task", "split", "submission_id").iter_rows():
    stored = sitedata.card_of(db, sid)
    with st.expander(f"{task} · {split} — {sid[:12]}"):
        ui.card_table(metadata.card(stored), key=f"card-{sid}")
