"""Submission: its model card (as on the board), every metric and slice (with intervals), and its status history."""

from __future__ import annotations

import polars as pl
import streamlit as st

from procbench.leaderboard import (
    analysis,
    boardview,
    config,
    metadata,
    queries,
    semantics,
    sitedata,
    ui,
)
from procbench.leaderboard.model import TaskInfo
from procbench.submissions.judging import SELF, judged_by

db = ui.database()
ui.check_params(("id",))
sid = st.text_input(
    "Submission id",
    key="id",
    bind="query-params",
    placeholder="paste an id, or open one from a board",
).strip()
if not sid:
    st.info("Open a submission from a board (its *Details* link) or paste its id.")
    st.stop()
row = sitedata.submission(db, sid)
if row is None:
    st.error("No visible submission with this id.")
    st.stop()

info = TaskInfo.from_row({**row, "primary_metric": None, "hidden": row["hidden_split"]})
st.header(ui.escape(row["model"]), anchor=False)
answered = boardview.row_coverage(
    db, row["task"], row["split"], sid, bool(row["is_reference"])
)  # issue #33: coverage on every page
coverage = f" · coverage {boardview.coverage_text(answered)}" if answered else ""
size = (
    "reported row (paper numbers, no items)"
    if row["is_reference"]
    else f"{row['n_items']} items{coverage}"
)
st.caption(
    f"team {ui.escape(row['team'])} · task {ui.code(row['task'])} · split {ui.code(row['split'])} · "
    f"{size} · submitted {row['created_at']:%Y-%m-%d %H:%M} UTC · id {ui.code(sid)}"
)
if row[
    "is_reference"
]:  # a paper's number: where it was published is what a reader checks first (issue #16)
    stored_metadata = metadata.parse(row["metadata_json"])
    source = queries.source_of(row["metadata_json"], True) or "not recorded"
    note = str(stored_metadata.get("note") or "").strip()
    st.info(
        f"**Reported in** {ui.escape(source)}"
        + (f" — {ui.escape(note)}" if note else "")
        + ". Numbers as the paper prints them, on the same data as this board."
    )
    url = str(info.spec.get("url") or "")
    if url:  # the project's own spec
        st.caption(
            f"Benchmark: [{ui.escape(url)}]({url})"
            + (" · the citation is on the task's page" if info.spec.get("citation") else "")
        )
if boardview.is_partial(answered) and answered is not None:
    st.info(
        f"**Partial file**: predictions for {answered[0]} of the split's {answered[1]} items (the others are scored as missing). "
        + (
            "The task ranks partial rows among full ones."
            if info.rank_partial
            else "Listed on the board with its coverage, not ranked among full submissions."
        )
    )
if not row["current"]:
    st.warning(
        "Scored under an earlier version of this task (another fingerprint): it is kept, but not on the current board."
    )
left, right = st.columns(2)
left.page_link(
    "site_pages/board.py",
    label="Open the task's board",
    query_params={"task": row["task"], "split": row["split"]},
)
right.page_link(
    "site_pages/model.py", label="Every task of this model", query_params={"model": row["model"]}
)

st.subheader("Model card")
card = metadata.card(
    {**row, **sitedata.card_of(db, sid)}
)  # the same reading as the board's columns
ui.card_table(card, key="card")
if card.description:
    st.caption(ui.escape(card.description))
# issue #34: who judged the verdicts, with the judge's model and the digest of its prompts (the row's provenance)
judge = judged_by(metadata.parse(row.get("metadata_json")))
digest = str(sitedata.card_of(db, sid).get("judge_prompt_digest") or "")
if judge == SELF:
    st.caption(
        "Judged by: the submitter (self-judged: the verdicts came with the file, not from the board's judge)."
    )
elif judge:
    st.caption(
        f"Judged by: the board's judge {ui.code(judge)}"
        + (f", prompts sha256 {ui.code(digest[:16])}…" if digest else "")
        + "."
    )
with st.expander("Metadata as submitted"):
    st.json(metadata.parse(row["metadata_json"]), expanded=True)

st.subheader("Metrics")
aggregates = sitedata.aggregates(db, sid)
whole = aggregates.filter(pl.col("slice") == "")
stored = dict(zip(whole["metric"], whole["value"]))
bootstrapped = bool(row["current"]) and not row["is_reference"]
has_items = not row["is_reference"] and bool(analysis.items_of(db, sid))
metric_rows = []
for m in info.metrics:
    if m.name not in stored:
        continue
    sem = semantics.describe(
        info, m
    )  # range, items covered, bounded variant (issue #30): as the board reads them
    # over the items the metric is computed over; a reason in the cell where there is no interval
    found = analysis.uncertainty(db, info, sid, m.name) if bootstrapped else None
    why = (
        found.reason
        if found is not None
        else ("" if not row["is_reference"] else analysis.NO_ITEMS_REPORTED)
    )
    metric_rows.append(
        {
            "Metric": m.display,
            "Group": m.group,
            "Value": m.shown(stored[m.name]),
            "Bounded": info.metric(sem.bounded).shown(stored.get(sem.bounded))
            if sem.bounded
            else None,
            "Above range": f"above {sem.range_text}" if sem.above(stored[m.name]) else "",
            "95% CI": (
                f"{m.shown(found.interval.low):.2f} – {m.shown(found.interval.high):.2f}"
                if found is not None and found.interval is not None
                else boardview.short_reason(why)
            ),
            # the items the metric is computed over (issue #30: the Score's 8 text questions of 9), with or without an interval;
            # a row stored without per-item scores has only its own count
            "Items": None
            if row["is_reference"]
            else (analysis.covered_items(db, info, sid, m.name) if has_items else row["n_items"]),
            "Primary": "yes" if m.name == info.primary else "",
        }
    )
metrics_frame = pl.DataFrame(
    metric_rows,
    schema={
        "Metric": pl.String,
        "Group": pl.String,
        "Value": pl.Float64,
        "Bounded": pl.Float64,
        "Above range": pl.String,
        "95% CI": pl.String,
        "Items": pl.Int64,
        "Primary": pl.String,
    },
)
has_bounded = metrics_frame["Bounded"].is_not_null().any()
ui.table(
    metrics_frame,
    column_order=[
        c
        for c in metrics_frame.columns
        if (c != "Bounded" or has_bounded)
        and (c != "Above range" or metrics_frame[c].str.len_chars().sum())
    ],
    column_config={
        "Value": st.column_config.NumberColumn(format="%.2f"),
        "Bounded": st.column_config.NumberColumn(
            "Bounded",
            format="%.2f",
            help="the spec's corrected (bounded) variant of the metric, beside it",
        ),
        "Above range": st.column_config.TextColumn(
            help="the value lies above the metric's range (the official scorer's figure; see the note)"
        ),
    },
    key="metrics",
)
above = [
    m.name
    for m in info.metrics
    if m.name in stored and semantics.describe(info, m).above(stored[m.name])
]
if above:
    st.caption(ui.escape(semantics.above_range_note(info, above)))
if has_bounded:
    st.caption(
        ui.escape(semantics.bounded_note(info, [m.name for m in info.metrics if m.name in stored]))
    )
ui.definitions(
    info, [m for m in info.metrics if m.name in stored]
)  # whole, as the spec states them (a table cell would cut them)
notes = analysis.summarised(
    [analysis.uncertainty(db, info, sid, m.name).reason for m in info.metrics if m.name in stored]
    if bootstrapped
    else []
)
st.caption(
    f"Intervals: 95% percentile bootstrap over the items each metric is computed over ({config.N_RESAMPLES} resamples, seed {config.SEED}), "
    "re-aggregated with the task's own aggregator; none for reported rows and small item counts. Values in % where the metric is a fraction."
    + (
        " No interval where: " + "; ".join(ui.escape(n) for n in notes if n) + "."
        if any(notes)
        else ""
    )
)

st.subheader("Slices")
sliced = aggregates.filter(pl.col("slice") != "")
if sliced.is_empty():
    st.caption("No slice figures.")
else:
    wide = sliced.pivot(
        on="metric", index=["slice", "slice_value", "n_items"], values="value"
    ).sort(["slice", "slice_value"])
    shown = [m for m in info.metrics if m.name in wide.columns]
    labels = {s.name: s for s in info.slices}
    wide = wide.with_columns(
        pl.Series(
            "label",
            [
                labels[s].value_label(v) if s in labels else v
                for s, v in zip(wide["slice"], wide["slice_value"])
            ],
            dtype=pl.String,
        )
    )
    described = {m.name: semantics.describe(info, m) for m in shown}
    # issue #30: a metric not defined on a slice value (no item it is computed over) is left empty there, not shown as 0
    undefined = {
        (s, v): {m.name for m in shown if not analysis.covers(db, info, m.name, labels.get(s), v)}
        for s, v in zip(wide["slice"], wide["slice_value"])
    }
    wide = wide.with_columns(
        *[
            pl.Series(
                m.name,
                [
                    None if m.name in undefined[(s, v)] else x
                    for s, v, x in zip(wide["slice"], wide["slice_value"], wide[m.name])
                ],
                dtype=pl.Float64,
            )
            for m in shown
        ],
    )
    flagged = [
        "; ".join(
            described[m.name].display for m in shown if described[m.name].above(r.get(m.name))
        )
        for r in wide.iter_rows(named=True)
    ]
    wide = wide.with_columns(pl.Series("above", flagged, dtype=pl.String))
    ui.table(
        wide.select(
            pl.col("slice").alias("Slice"),
            pl.col("label").alias("Value"),
            pl.col("n_items").alias("Items"),
            # rounded as the Metrics table and the board round (MetricInfo.shown): polars' round gave 7.14 where they
            # give 7.13 for PM-LLM's C2 of 7.135 (issue #30, real-data review)
            *[
                pl.Series(m.display, [m.shown(v) for v in wide[m.name]], dtype=pl.Float64)
                for m in shown
            ],
            *([pl.col("above").alias("Above range")] if any(flagged) else []),
        ),
        column_config={
            **ui.metric_columns(shown),
            "Above range": st.column_config.TextColumn(
                help="metrics above their range on this slice value (the official scorer's figures; see the note)"
            ),
        },
        key="slices",
    )
    if any(flagged):
        st.caption(
            ui.escape(
                semantics.above_range_note(
                    info,
                    [
                        m.name
                        for m in shown
                        if any(described[m.name].display in f.split("; ") for f in flagged)
                    ],
                )
            )
        )
    if any(undefined.values()):
        st.caption(
            "Empty: the metric is not defined on that slice value (none of the items it is computed over)."
        )

st.subheader("Status history")
history = sitedata.status_history(db, sid)
ui.table(
    history.rename({"status": "Status", "reason": "Reason", "changed_at": "When (UTC)"}),
    key="history",
)
slice_labels = {(s.name, v): label for s in info.slices for v, label in s.value_labels.items()}
ui.downloads(
    aggregates.with_columns(  # raw slice values, plus the spec's label of each, and whether the value lies above its metric's range
        pl.Series(
            "slice_value_label",
            [
                slice_labels.get((s, v), "")
                for s, v in zip(aggregates["slice"], aggregates["slice_value"])
            ],
            dtype=pl.String,
        ),
        pl.Series(
            "above_range",
            [
                semantics.describe(info, n).above(v)
                for n, v in zip(aggregates["metric"], aggregates["value"])
            ],
            dtype=pl.Boolean,
        ),
    ),
    ui.file_stem("submission", sid),
    key="submission",
)
