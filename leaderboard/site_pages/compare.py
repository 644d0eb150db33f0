"""Compare two submissions: per-slice deltas with paired intervals and p-values, then the items behind them.

Only slice values the metric is defined on are compared (``analysis.covers``); an empty interval says why in
the board's words (``analysis.pair_reasons``); long slice-value labels are listed under the table (issue #16).

The tables are computed once per store version and choice of A, B and metric (``cache.memo``), and each
submission's per-item values once per process (``analysis.per_item_values``): a warm view recomputes neither.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
import streamlit as st

from procbench.leaderboard import (
    analysis,
    boardview,
    cache,
    config,
    evidence,
    itemview,
    semantics,
    sitedata,
    ui,
)
from procbench.leaderboard.model import SliceInfo, TaskInfo

TOP_ITEMS = 10
SHORT_LABEL = 40  # characters: a longer slice-value label is listed under the table, not in it
PARAMS = ("task", "split", "a", "b", "metric", "perm", "item", "layout", "matching")

db = ui.database()
ui.check_params(PARAMS)
info: TaskInfo = ui.pick_task(db)
st.header(f"Compare — {info.title}")
ui.task_caption(info)

metric_default = info.primary_metric


def _candidates() -> dict[str, dict]:
    """The board's submissions (id -> row): submitted ones first, each group best first."""
    frame = sitedata.submissions_of(db, info.task, info.split)
    frame = frame.sort(
        ["is_reference", "primary_value"],
        descending=[False, metric_default.higher_is_better],
        nulls_last=True,
    )
    return {r["submission_id"]: r for r in frame.iter_rows(named=True)}


rows = cache.memo(db, "compare.candidates", (info.task, info.split), _candidates)
ids = list(rows)
if len(ids) < 2:
    st.info("This board has fewer than two submissions.")
    st.stop()
a_id = ui.url_choice(
    st.sidebar,
    "System A",
    ids,
    index=0,
    key="a",
    format_func=lambda s: ui.submission_label(rows[s]),
)
b_id = ui.url_choice(
    st.sidebar,
    "System B",
    ids,
    index=1,
    key="b",
    format_func=lambda s: ui.submission_label(rows[s]),
)
metric = info.metric(ui.metric_choice(st.sidebar, info))
a_row, b_row = rows[a_id], rows[b_id]
left, right = st.columns(2)


def _side(row: dict) -> str:
    """A side's coverage, as the board words it (issue #33: '5 / 6 · partial'); '' for a reported row."""
    answered = boardview.row_coverage(
        db, info.task, info.split, row["submission_id"], bool(row["is_reference"])
    )
    return f" · coverage {boardview.coverage_text(answered)}" if answered else ""


left.markdown(f"**A** · {ui.escape(a_row['model'])} — {ui.escape(a_row['team'])}{_side(a_row)}")
right.markdown(f"**B** · {ui.escape(b_row['model'])} — {ui.escape(b_row['team'])}{_side(b_row)}")
if a_id == b_id:
    st.warning("A and B are the same submission.")

sem = semantics.describe(
    info, metric
)  # range, items covered, bounded variant: the one description every page reads (issue #30)

# -- per-slice deltas -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Deltas:
    table: pl.DataFrame  # what the page shows (display units)
    raw: pl.DataFrame  # the same figures in stored units (the download)
    no_interval: tuple[
        str, ...
    ]  # every row's reason for an empty interval, once each (the board's words)
    uncovered: tuple[
        str, ...
    ]  # slice values the metric is not defined on (a restricted measure's other items), left out


def _deltas() -> Deltas:
    """A − B on the whole split and every slice value the metric is defined on, with each empty interval's reason."""
    table_rows: list[dict[str, object]] = []
    raw_rows: list[dict[str, object]] = []
    reasons: dict[str, None] = {}
    uncovered: list[str] = []
    figures = sitedata.figures(db, info.task, info.split, [a_id, b_id], metric.name)
    bounded_figures = (
        sitedata.figures(db, info.task, info.split, [a_id, b_id], sem.bounded)
        if sem.bounded
        else None
    )
    bounded_rows = (
        bounded_figures.iter_rows(named=True) if bounded_figures is not None else iter(())
    )
    bounded_lookup = {
        (r["submission_id"], r["slice"], r["slice_value"]): r["value"] for r in bounded_rows
    }
    bounded = info.metric(sem.bounded) if sem.bounded else None

    def bounded_cells(sl: SliceInfo | None, value: str) -> dict[str, object]:
        """The bounded variant's A and B beside the official figures (issue #30), where the spec declares one."""
        if bounded is None:
            return {}
        key = sl.name if sl is not None else ""
        return {
            f"A {bounded.display}": bounded.shown(bounded_lookup.get((a_id, key, value))),
            f"B {bounded.display}": bounded.shown(bounded_lookup.get((b_id, key, value))),
        }

    lookup = {
        (r["submission_id"], r["slice"], r["slice_value"]): (r["value"], r["n_items"])
        for r in figures.iter_rows(named=True)
    }
    views: list[tuple[SliceInfo | None, str]] = [(None, "")]
    for declared in info.slices:
        views += [
            (declared, v)
            for v in sorted({value for _, name, value in lookup if name == declared.name})
        ]
    sides = [(a_id, bool(a_row["is_reference"])), (b_id, bool(b_row["is_reference"]))]
    for sl, value in views:
        key = sl.name if sl else ""
        if (a_id, key, value) not in lookup or (b_id, key, value) not in lookup:
            continue
        if not analysis.covers(db, info, metric.name, sl, value):
            uncovered.append(f"{key} = {value}")
            continue
        # over the items the metric is computed over (issue #30); a side whose every resample is one value has no interval of its own
        result = analysis.compare(
            analysis.bootstrap_of(db, info, a_id, sl, value, metric.name),
            analysis.bootstrap_of(db, info, b_id, sl, value, metric.name),
            metric.name,
        )
        why = [] if result else analysis.pair_reasons(db, info, metric.name, sides, sl, value)
        reasons.update(dict.fromkeys(why))
        (a_value, n_a), (b_value, n_b) = lookup[(a_id, key, value)], lookup[(b_id, key, value)]
        delta = None if a_value is None or b_value is None else a_value - b_value
        raw_rows.append(
            {
                "task": info.task,
                "split": info.split,
                "slice": key,
                "slice_value": value,
                "slice_value_label": sl.value_labels.get(value, "") if sl else "",
                "metric": metric.name,
                "a": a_id,
                "b": b_id,
                "value_a": a_value,
                "value_b": b_value,
                "delta": delta,
                "ci_low": result.low if result else None,
                "ci_high": result.high if result else None,
                "p_value": result.p_value if result else None,
                "n_items": result.n_items
                if result
                else (n_a if not a_row["is_reference"] else n_b),
                "ci_note": "; ".join(why),
                "above_range": "; ".join(
                    s for s, v in (("a", a_value), ("b", b_value)) if sem.above(v)
                ),
            }
        )
        table_rows.append(
            {
                "Slice": sl.name if sl else "(whole split)",
                # a long label would push the figures off screen (issue #16): it is listed whole under the table instead
                "Value": (
                    sl.value_label(value) if len(sl.value_label(value)) <= SHORT_LABEL else value
                )
                if sl
                else value,
                "Items": result.n_items if result else (n_a if not a_row["is_reference"] else n_b),
                "A": metric.shown(a_value),
                "B": metric.shown(b_value),
                "Δ (A − B)": metric.shown(delta),
                "95% CI of Δ": f"{metric.shown(result.low):.2f} – {metric.shown(result.high):.2f}"
                if result
                else boardview.short_reason(why[0]),
                "p": semantics.format_p(result.p_value, result.n_resamples) if result else "",
                **(
                    {
                        "Above range": "; ".join(
                            s for s, v in (("A", a_value), ("B", b_value)) if sem.above(v)
                        )
                    }
                    if sem.high is not None
                    else {}
                ),
                **bounded_cells(sl, value),
            }
        )
    return Deltas(
        pl.DataFrame(table_rows, strict=False),
        pl.DataFrame(raw_rows, strict=False),
        tuple(reasons),
        tuple(uncovered),
    )


def _long_labels(shown: pl.DataFrame) -> str:
    """The spec's label of every value the table shows by its stored value alone (its label too long for the cell)."""
    parts = [
        f"{ui.code(v)} = {ui.escape(sl.value_labels[v])}"
        for sl in info.slices
        for v in shown.filter(pl.col("Slice") == sl.name)["Value"].to_list()
        if v in sl.value_labels and sl.value_labels[v] != v
    ]
    return "Slice values: " + "; ".join(parts) + "." if parts else ""


# the interval floor is an operator's setting (analysis.min_interval_items): part of what the table shows
pair_key = (info.task, info.split, a_id, b_id, metric.name)
with st.spinner("Paired bootstrap over items…"):
    deltas = cache.memo(db, "compare.deltas", (*pair_key, analysis.min_interval_items()), _deltas)
st.subheader(f"{metric.display}: A − B on every slice")
ui.table(
    deltas.table,
    column_config={
        **{c: st.column_config.NumberColumn(format="%.2f") for c in ("A", "B", "Δ (A − B)")},
        "Value": st.column_config.TextColumn(
            "Value",
            width=ui.text_px(
                deltas.table["Value"].to_list() if deltas.table.height else [],
                min_px=80,
                max_px=300,
            ),
            help="the slice value (its label, or the stored value with its label listed under the table)",
        ),
        "95% CI of Δ": st.column_config.TextColumn(
            "95% CI of Δ",
            help="95% paired bootstrap interval of A − B; 'none: …' says why there is none (see below)",
        ),
        "p": st.column_config.TextColumn(
            "p",
            help="p-value of the paired bootstrap test of A − B = 0 ('< 0.001': no resample of 1000 crossed 0; '< 0.0001': below 4 decimals)",
        ),
    },
    key="deltas",
)
labels = _long_labels(deltas.table) if deltas.table.height else ""
if labels:
    st.caption(labels)
st.caption(
    f"Paired bootstrap over the items both were scored on ({config.N_RESAMPLES} resamples, seed {config.SEED}); each resample is re-aggregated with the "
    "task's own aggregator. Scores in % where the metric is a fraction."
)
above = deltas.table["Above range"].to_list() if "Above range" in deltas.table.columns else []
if any(above):
    st.caption(ui.escape(semantics.above_range_note(info, [metric.name])))
if sem.bounded:
    st.caption(ui.escape(semantics.bounded_note(info, [metric.name])))
if deltas.no_interval:
    st.caption(
        "No interval where: "
        + "; ".join(ui.escape(n) for n in analysis.summarised(deltas.no_interval))
        + "."
    )
if deltas.uncovered:
    where = " and ".join(f"{k} = {v}" for k, v in info.restriction(metric.name))
    st.caption(
        f"{ui.escape(metric.display)} counts only the items with {ui.code(where)}; not shown on "
        + ", ".join(ui.code(u) for u in deltas.uncovered)
        + ", which hold none of them: a figure there (the measure over no items) compares nothing."
    )
raw = deltas.raw
ui.downloads(
    raw,
    ui.file_stem("compare", info.task, info.split, a_id[:8], b_id[:8], metric.name),
    key="compare",
)

a_items, b_items = analysis.items_of(db, a_id), analysis.items_of(db, b_id)
if (
    a_items
    and b_items
    and st.toggle(
        "Approximate randomisation test (whole split)", value=False, key="perm", bind="query-params"
    )
):
    with st.spinner("Permutation test…"):
        p_perm = analysis.permutation_p(info.task, a_items, b_items, metric.name)
    st.write(
        f"Approximate randomisation p = {semantics.format_p(p_perm)} ({config.N_RESAMPLES} permutations, seed {config.SEED})"
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
    shared = sorted(
        set(a_values) & set(b_values),
        key=lambda i: (-abs(a_values[i] - b_values[i]), ui.natural_key(i)),
    )[:TOP_ITEMS]
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
ui.table(
    diff,
    column_config={
        c: st.column_config.NumberColumn(format="%.2f") for c in ("A", "B", "Δ (A − B)")
    },
    key="items",
)
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
        + (
            "either submission"
            if a_pred is None and b_pred is None
            else ("A" if a_pred is None else "B")
        )
        + ": per-item scores only"
        + (" (and gold)" if gold_set is not None else "")
        + "."
    )
gold_item = gold_set.items.get(item) if gold_set is not None else None
if gold_set is None:
    st.caption(
        "The gold this board was scored against is not available to the site (no data root with the same fingerprint)."
    )

a_scores = next((i.values for i in a_items if i.item_id == item), {})
b_scores = next((i.values for i in b_items if i.item_id == item), {})
itemview.show(info, item, gold_item, {"A": a_pred, "B": b_pred}, {"A": a_scores, "B": b_scores})
