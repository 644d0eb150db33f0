"""Compare two submissions: per-slice deltas with paired intervals and p-values, then the items behind them."""

from __future__ import annotations

import polars as pl
import streamlit as st

from leaderboard import analysis, config, evidence, queries, ui
from leaderboard.model import TaskInfo

TOP_ITEMS = 10

db = ui.database()
info: TaskInfo = ui.pick_task(db)
st.header(f"Compare — {info.title}")
ui.task_caption(info)

candidates = queries.submissions_of(db, info.task, info.split)
metric_default = info.primary_metric
candidates = candidates.sort(["is_reference", "primary_value"], descending=[False, metric_default.higher_is_better], nulls_last=True)
rows = {r["submission_id"]: r for r in candidates.iter_rows(named=True)}
ids = list(rows)
if len(ids) < 2:
    st.info("This board has fewer than two submissions.")
    st.stop()
a_id = ui.url_choice(st.sidebar, "System A", ids, index=0, key="a", format_func=lambda s: ui.submission_label(rows[s]))
b_id = ui.url_choice(st.sidebar, "System B", ids, index=1, key="b", format_func=lambda s: ui.submission_label(rows[s]))
metric_names = [m.name for m in info.metrics] or [info.primary]
metric = info.metric(
    ui.url_choice(st.sidebar, "Metric", metric_names, index=metric_names.index(info.primary) if info.primary in metric_names else 0, key="metric", format_func=lambda n: info.metric(n).display)
)
a_row, b_row = rows[a_id], rows[b_id]
left, right = st.columns(2)
left.markdown(f"**A** · {ui.escape(a_row['model'])} — {ui.escape(a_row['team'])}")
right.markdown(f"**B** · {ui.escape(b_row['model'])} — {ui.escape(b_row['team'])}")
if a_id == b_id:
    st.warning("A and B are the same submission.")

# -- per-slice deltas -----------------------------------------------------------------------------
table_rows = []
figures = queries.figures(db, info.task, info.split, [a_id, b_id], metric.name)
lookup = {(r["submission_id"], r["slice"], r["slice_value"]): (r["value"], r["n_items"]) for r in figures.iter_rows(named=True)}
views = [(None, "")]
for sl in info.slices:
    views += [(sl, v) for v in sorted({value for _, name, value in lookup if name == sl.name})]
with st.spinner("Paired bootstrap over items…"):
    for sl, value in views:
        key = sl.name if sl else ""
        if (a_id, key, value) not in lookup or (b_id, key, value) not in lookup:
            continue
        result = analysis.compare(analysis.bootstrap_of(db, info, a_id, sl, value), analysis.bootstrap_of(db, info, b_id, sl, value), metric.name)
        (a_value, n_a), (b_value, n_b) = lookup[(a_id, key, value)], lookup[(b_id, key, value)]
        delta = None if a_value is None or b_value is None else a_value - b_value
        table_rows.append(
            {
                "Slice": sl.name if sl else "(whole split)",
                "Value": value,
                "Items": result.n_items if result else (n_a if not a_row["is_reference"] else n_b),
                "A": metric.shown(a_value),
                "B": metric.shown(b_value),
                "Δ (A − B)": metric.shown(delta),
                "95% CI of Δ": f"{metric.shown(result.low):.2f} – {metric.shown(result.high):.2f}" if result else "",
                "p (paired bootstrap)": round(result.p_value, 4) if result else None,
            }
        )
st.subheader(f"{metric.display}: A − B on every slice")
deltas = pl.DataFrame(table_rows, strict=False)
st.dataframe(deltas, hide_index=True, width="stretch")
st.caption(
    f"Paired bootstrap over the items both were scored on ({config.N_RESAMPLES} resamples, seed {config.SEED}); each resample is re-aggregated with the task's own aggregator. "
    "No interval where a side is a reported row (no items) or the slice re-scores restricted gold (answer-label slices). Scores in % where the metric is a fraction."
)
ui.downloads(deltas, ui.file_stem("compare", info.task, info.split, a_id[:8], b_id[:8], metric.name), key="compare")

a_items, b_items = analysis.items_of(db, a_id), analysis.items_of(db, b_id)
if a_items and b_items and st.toggle("Approximate randomisation test (whole split)", value=False, key="perm", bind="query-params"):
    with st.spinner("Permutation test…"):
        p_perm = analysis.permutation_p(info.task, a_items, b_items, metric.name)
    st.write(f"Approximate randomisation p = {p_perm:.4f} ({config.N_RESAMPLES} permutations, seed {config.SEED})" if p_perm is not None else "Not available for this task.")

# -- items where they differ most -----------------------------------------------------------------
st.subheader("Items where they differ most")
if info.hidden:
    st.info("Hidden split: per-item scores, predictions and gold are never shown.")
    st.stop()
if not a_items or not b_items:
    st.caption("A reported row has no per-item data.")
    st.stop()
a_values = analysis.per_item_metric(info.task, a_items, metric.name)
b_values = analysis.per_item_metric(info.task, b_items, metric.name)
shared = sorted(set(a_values) & set(b_values), key=lambda i: (-abs(a_values[i] - b_values[i]), i))[:TOP_ITEMS]
diff = pl.DataFrame(
    {
        "Item": shared,
        "A": [metric.shown(a_values[i]) for i in shared],
        "B": [metric.shown(b_values[i]) for i in shared],
        "Δ (A − B)": [metric.shown(a_values[i] - b_values[i]) for i in shared],
    },
    strict=False,
)
st.dataframe(diff, hide_index=True, width="stretch")
st.caption("Each item's value is the task's aggregator applied to that item alone.")
if not shared:
    st.stop()

item = st.selectbox("Item", shared, key="item", bind="query-params")
gold_set = evidence.gold(info.task, info.split, info.fingerprint)
a_pred = evidence.predictions(db, a_id, info.task, info.split, info.fingerprint)
b_pred = evidence.predictions(db, b_id, info.task, info.split, info.fingerprint)
if a_pred is None or b_pred is None:
    st.caption(
        "This store keeps no raw prediction file for "
        + ("either submission" if a_pred is None and b_pred is None else ("A" if a_pred is None else "B"))
        + ": per-item scores only" + (" (and gold)" if gold_set is not None else "") + "."
    )
gold_item = gold_set.items.get(item) if gold_set is not None else None
if gold_set is None:
    st.caption("The gold this board was scored against is not available to the site (no data root with the same fingerprint).")

if info.benchmark == "PAGED" and gold_item is not None:
    from runners.paged.dot import draw_document, to_dot
    from runners.paged.parse import graph_of_gold_lines

    columns = st.columns(3 if a_pred is not None or b_pred is not None else 1)
    columns[0].markdown("**Gold**")
    columns[0].graphviz_chart(to_dot(graph_of_gold_lines(gold_item.lines), title="gold"))
    for column, name, preds in ((columns[1:2], "A", a_pred), (columns[2:3], "B", b_pred)):
        if column and preds is not None:
            column[0].markdown(f"**{name}** (green: matched, orange: not in gold)")
            column[0].graphviz_chart(draw_document(gold_item, preds.get(item) or "")[1])
    with st.expander("Document text"):
        st.text(gold_item.paragraph)
else:
    columns = st.columns(3)
    columns[0].markdown("**Gold**")
    columns[0].code(evidence.as_text(gold_item) if gold_item is not None else "(not available)", language=None, wrap_lines=True)
    for column, name, preds in ((columns[1], "A", a_pred), (columns[2], "B", b_pred)):
        column.markdown(f"**{name}**")
        if preds is not None:
            column.code(evidence.as_text(preds.get(item, "(no prediction: scored as empty)")), language=None, wrap_lines=True)
        else:
            column.code("\n".join(f"{k} = {v:g}" for k, v in next((i.values for i in (a_items if name == "A" else b_items) if i.item_id == item), {}).items()), language=None, wrap_lines=True)
