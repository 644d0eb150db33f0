"""Compare two submissions: per-slice deltas with paired intervals and p-values, then the items behind them.

The tables are computed once per store version and choice of A, B and metric (``cache.memo``), and each
submission's per-item values once per process (``analysis.per_item_values``): a warm view recomputes neither.
"""

from __future__ import annotations

import polars as pl
import streamlit as st

from leaderboard import analysis, cache, config, evidence, itemview, sitedata, ui
from leaderboard.model import TaskInfo

TOP_ITEMS = 10
PARAMS = ("task", "split", "a", "b", "metric", "perm", "item", "layout")

db = ui.database()
ui.check_params(PARAMS)
info: TaskInfo = ui.pick_task(db)
st.header(f"Compare — {info.title}")
ui.task_caption(info)

metric_default = info.primary_metric


def _candidates() -> dict[str, dict]:
    """The board's submissions (id -> row): submitted ones first, each group best first."""
    frame = sitedata.submissions_of(db, info.task, info.split)
    frame = frame.sort(["is_reference", "primary_value"], descending=[False, metric_default.higher_is_better], nulls_last=True)
    return {r["submission_id"]: r for r in frame.iter_rows(named=True)}


rows = cache.memo(db, "compare.candidates", (info.task, info.split), _candidates)
ids = list(rows)
if len(ids) < 2:
    st.info("This board has fewer than two submissions.")
    st.stop()
a_id = ui.url_choice(st.sidebar, "System A", ids, index=0, key="a", format_func=lambda s: ui.submission_label(rows[s]))
b_id = ui.url_choice(st.sidebar, "System B", ids, index=1, key="b", format_func=lambda s: ui.submission_label(rows[s]))
metric = info.metric(ui.metric_choice(st.sidebar, info))
a_row, b_row = rows[a_id], rows[b_id]
left, right = st.columns(2)
left.markdown(f"**A** · {ui.escape(a_row['model'])} — {ui.escape(a_row['team'])}")
right.markdown(f"**B** · {ui.escape(b_row['model'])} — {ui.escape(b_row['team'])}")
if a_id == b_id:
    st.warning("A and B are the same submission.")

# -- per-slice deltas -----------------------------------------------------------------------------


def _deltas() -> tuple[pl.DataFrame, pl.DataFrame]:
    """The table of A − B on the whole split and every slice value, and the same figures in stored units (the download)."""
    table_rows: list[dict[str, object]] = []
    raw_rows: list[dict[str, object]] = []
    figures = sitedata.figures(db, info.task, info.split, [a_id, b_id], metric.name)
    lookup = {(r["submission_id"], r["slice"], r["slice_value"]): (r["value"], r["n_items"]) for r in figures.iter_rows(named=True)}
    views = [(None, "")]
    for sl in info.slices:
        views += [(sl, v) for v in sorted({value for _, name, value in lookup if name == sl.name})]
    for sl, value in views:
        key = sl.name if sl else ""
        if (a_id, key, value) not in lookup or (b_id, key, value) not in lookup:
            continue
        result = analysis.compare(analysis.bootstrap_of(db, info, a_id, sl, value), analysis.bootstrap_of(db, info, b_id, sl, value), metric.name)
        (a_value, n_a), (b_value, n_b) = lookup[(a_id, key, value)], lookup[(b_id, key, value)]
        delta = None if a_value is None or b_value is None else a_value - b_value
        raw_rows.append(
            {
                "task": info.task, "split": info.split, "slice": key, "slice_value": value,
                "slice_value_label": sl.value_labels.get(value, "") if sl else "", "metric": metric.name, "a": a_id, "b": b_id,
                "value_a": a_value, "value_b": b_value, "delta": delta, "ci_low": result.low if result else None,
                "ci_high": result.high if result else None, "p_value": result.p_value if result else None,
                "n_items": result.n_items if result else (n_a if not a_row["is_reference"] else n_b),
            }
        )
        table_rows.append(
            {
                "Slice": sl.name if sl else "(whole split)",
                "Value": sl.value_label(value) if sl else value,
                "Items": result.n_items if result else (n_a if not a_row["is_reference"] else n_b),
                "A": metric.shown(a_value),
                "B": metric.shown(b_value),
                "Δ (A − B)": metric.shown(delta),
                "95% CI of Δ": f"{metric.shown(result.low):.2f} – {metric.shown(result.high):.2f}" if result else "",
                "p (paired bootstrap)": round(result.p_value, 4) if result else None,
            }
        )
    return pl.DataFrame(table_rows, strict=False), pl.DataFrame(raw_rows, strict=False)


# the interval floor is an operator's setting (analysis.min_interval_items): part of what the table shows
pair_key = (info.task, info.split, a_id, b_id, metric.name)
with st.spinner("Paired bootstrap over items…"):
    deltas, raw = cache.memo(db, "compare.deltas", (*pair_key, analysis.min_interval_items()), _deltas)
st.subheader(f"{metric.display}: A − B on every slice")
ui.table(deltas, column_config={c: st.column_config.NumberColumn(format="%.2f") for c in ("A", "B", "Δ (A − B)")}, key="deltas")
st.caption(
    f"Paired bootstrap over the items both were scored on ({config.N_RESAMPLES} resamples, seed {config.SEED}); each resample is re-aggregated with the "
    "task's own aggregator. "
    "No interval where a side is a reported row (no items) or the slice re-scores restricted gold (answer-label slices). Scores in % where the metric is a "
    "fraction."
)
ui.downloads(raw, ui.file_stem("compare", info.task, info.split, a_id[:8], b_id[:8], metric.name), key="compare")

a_items, b_items = analysis.items_of(db, a_id), analysis.items_of(db, b_id)
if a_items and b_items and st.toggle("Approximate randomisation test (whole split)", value=False, key="perm", bind="query-params"):
    with st.spinner("Permutation test…"):
        p_perm = analysis.permutation_p(info.task, a_items, b_items, metric.name)
    st.write(
        f"Approximate randomisation p = {p_perm:.4f} ({config.N_RESAMPLES} permutations, seed {config.SEED})"
        if p_perm is not None
        else "Not available for this task."
    )

# -- items where they differ most -----------------------------------------------------------------
st.subheader("Items where they differ most")
if info.hidden:
    st.info("Hidden split: per-item scores, predictions and gold are never shown.")
    st.stop()
if not a_items or not b_items:
    st.caption("A reported row has no per-item data.")
    st.stop()


def _differences() -> pl.DataFrame:
    """The items where A and B differ most, each item's value the task's aggregator over that item alone."""
    a_values = analysis.per_item_values(db, info.task, a_id, metric.name)
    b_values = analysis.per_item_values(db, info.task, b_id, metric.name)
    shared = sorted(set(a_values) & set(b_values), key=lambda i: (-abs(a_values[i] - b_values[i]), i))[:TOP_ITEMS]
    return pl.DataFrame(
        {
            "Item": shared,
            "A": [metric.shown(a_values[i]) for i in shared],
            "B": [metric.shown(b_values[i]) for i in shared],
            "Δ (A − B)": [metric.shown(a_values[i] - b_values[i]) for i in shared],
        },
        strict=False,
    )


diff = cache.memo(db, "compare.items", pair_key, _differences)
shared = diff["Item"].to_list()
ui.table(diff, column_config={c: st.column_config.NumberColumn(format="%.2f") for c in ("A", "B", "Δ (A − B)")}, key="items")
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

a_scores = next((i.values for i in a_items if i.item_id == item), {})
b_scores = next((i.values for i in b_items if i.item_id == item), {})
itemview.show(info, item, gold_item, {"A": a_pred, "B": b_pred}, {"A": a_scores, "B": b_scores})
