"""Items: browse every item of a public split with its gold and one submission's prediction and item scores."""

from __future__ import annotations

import polars as pl
import streamlit as st

from procbench.leaderboard import analysis, evidence, itemview, sitedata, ui
from procbench.leaderboard.model import TaskInfo

PARAMS = ("task", "split", "id", "item", "metric", "layout", "matching")

db = ui.database()
ui.check_params(PARAMS)
info: TaskInfo = ui.pick_task(db)
st.header(f"Items — {info.title}")
ui.task_caption(info)
if info.hidden:
    st.info("Hidden split: per-item scores, predictions and gold are never shown.")
    st.stop()

candidates = sitedata.submissions_of(db, info.task, info.split).filter(~pl.col("is_reference"))
candidates = candidates.sort(
    "primary_value", descending=info.primary_metric.higher_is_better, nulls_last=True
)
if candidates.is_empty():
    st.info("No submitted rows on this board (papers' rows have no per-item data).")
    st.stop()
rows = {r["submission_id"]: r for r in candidates.iter_rows(named=True)}
sid = ui.url_choice(
    st.sidebar,
    "Submission",
    list(rows),
    key="id",
    format_func=lambda s: ui.submission_label(rows[s]),
)
metric_names = [m.name for m in info.metrics] or [info.primary]
metric = info.metric(
    ui.url_choice(
        st.sidebar,
        "Metric",
        metric_names,
        index=metric_names.index(info.primary) if info.primary in metric_names else 0,
        key="metric",
        format_func=lambda n: info.metric(n).display,
    )
)

items = sorted(
    analysis.items_of(db, sid), key=lambda i: ui.natural_key(i.item_id)
)  # "2" before "10" (issue #30)
values = analysis.per_item_metric(info.task, items, metric.name)
gold_set = evidence.gold(info.task, info.split, info.fingerprint)
listing = pl.DataFrame(
    {
        "Item": [i.item_id for i in items],
        metric.display: [metric.shown(values.get(i.item_id)) for i in items],
    },
    schema={"Item": pl.String, metric.display: pl.Float64},
)
st.subheader(f"Every item of {ui.escape(rows[sid]['model'])} ({len(items)})")
ui.table(listing, column_config=ui.metric_columns([metric]), key="listing")
st.caption(
    f"Each item's {ui.escape(metric.display)} is the task's aggregator applied to that item alone (in % where the metric is a fraction)."
)
ui.downloads(
    pl.DataFrame(
        {
            "item_id": [i.item_id for i in items],
            "metric": metric.name,
            "value": [values.get(i.item_id) for i in items],
        },
        schema={"item_id": pl.String, "metric": pl.String, "value": pl.Float64},
    ),
    ui.file_stem("items", info.task, info.split, sid[:12], metric.name),
    key="items",
)
if not items:
    st.stop()

item = ui.url_choice(st, "Item", [i.item_id for i in items], key="item")
predictions = evidence.predictions(db, sid, info.task, info.split, info.fingerprint)
if gold_set is None:
    st.caption(
        "The gold this board was scored against is not available to the site (no data root with the same fingerprint)."
    )
if predictions is None:
    st.caption("This store keeps no raw prediction file for this submission: item scores only.")
gold_item = gold_set.items.get(item) if gold_set is not None else None
scores = next((i.values for i in items if i.item_id == item), {})
itemview.show(
    info, item, gold_item, {rows[sid]["model"]: predictions}, {rows[sid]["model"]: scores}
)
