"""Task board: ranked submissions and reported rows, sliced, filtered, with intervals and tie groups.

Metric columns come first (rank, the ranking metric and its interval, the tie mark, the model, the other metrics);
the card and bookkeeping columns (kind, model card, team, items, source, dates) are shown on demand, apart
(``procbench.leaderboard.boardlayout``).
"""

from __future__ import annotations

import streamlit as st

from procbench.leaderboard import (
    analysis,
    boardlayout,
    boardview,
    config,
    overview,
    semantics,
    sitedata,
    ui,
)
from procbench.leaderboard.model import TaskInfo

PARAMS = (
    "task",
    "split",
    "slice",
    "value",
    "groups",
    "sort",
    "kind",
    "access",
    "family",
    "size",
    "team",
    "contamination",
    "ran",
    "judged",
    "ci",
    "details",
)

db = ui.database()
ui.check_params(PARAMS)
info = ui.pick_task(db)
sl, slice_value = ui.pick_slice(db, info)
groups = st.sidebar.multiselect(
    "Metric groups", info.groups, default=info.groups, key="groups", bind="query-params"
)
metric_names = [m.name for m in info.metrics] or [info.primary]
sort_metric = ui.url_choice(
    st.sidebar,
    "Rank by",
    metric_names,
    index=metric_names.index(info.primary) if info.primary in metric_names else 0,
    key="sort",
    format_func=lambda n: info.metric(n).display,
)

everything = boardview.view(db, info, sl=sl, slice_value=slice_value, interval_rows=0).facets
# a mistyped filter value in the address is named, with the values there are (the bound controls drop it silently)
ui.note_unknown_values(
    {
        "groups": ("metric group", info.groups),
        "kind": ("kind", everything.get("kind", [])),
        "size": ("size class", everything.get("size", [])),
        "access": ("weights", everything.get("access", [])),
        "family": ("method family", everything.get("family", [])),
        "team": ("team", everything.get("team", [])),
        "contamination": ("contamination", everything.get("contamination", [])),
        "ran": ("run by", everything.get("run_by", [])),
        "judged": ("judged by", everything.get("judged", [])),
    }
)
ui.note_bad_whole_number(
    "ci", "Bootstrap the top N rows", 0, config.MAX_INTERVAL_ROWS, config.DEFAULT_INTERVAL_ROWS
)
# issue #31: the eight filters are drawn when the visitor opens them or one is set in the address: drawn on every view,
# their multiselects were two fifths of a warm board's elements in the browser. A filter in the address keeps them open.
FILTERS = ("kind", "size", "access", "family", "team", "contamination", "ran", "judged")
filtered = any(k in st.query_params for k in FILTERS)
filter_box = st.sidebar.expander("Filters", expanded=filtered, key="filters", on_change="rerun")
shown = bool(filter_box.open) or filtered


def pick(label: str, facet: str, key: str, help: str | None = None) -> list[str]:
    """One filter's values ([] = all); drawn in the Filters box only when it is shown."""
    if not shown:
        return []
    with filter_box:
        return st.multiselect(
            label,
            everything.get(facet, []),
            key=key,
            bind="query-params",
            placeholder="all",
            help=help,
        )


kinds = pick("Kind", "kind", "kind")
sizes = pick(
    "Size class",
    "size",
    "size",
    "commercial / big open-source / small (≤ 8 GB) / tiny (≤ 4 GB), or parameter-count classes",
)
access = pick("Weights (open / closed)", "access", "access")
families = pick("Method family", "family", "family")
teams = pick("Team", "team", "team")
# issue #34: the model card's contamination mark, who ran the model, who judged the verdicts
contamination = pick(
    "Contamination",
    "contamination",
    "contamination",
    "the model card's word on the model's known exposure to this benchmark's data",
)
ran = pick(
    "Run by",
    "run_by",
    "ran",
    "who ran the model: the submitter, the board's operator, or a paper (reported rows)",
)
judged = pick(
    "Judged by",
    "judged",
    "judged",
    "who judged the verdicts: the board's judge, the submitter (self-judged), or no judge",
)
interval_rows = st.sidebar.number_input(
    "Bootstrap the top N rows",
    min_value=0,
    max_value=config.MAX_INTERVAL_ROWS,
    value=config.DEFAULT_INTERVAL_ROWS,
    key="ci",
    bind="query-params",
    help="95% intervals and the tie group are computed for this many submitted rows (cached per submission)",
)

filters = boardview.BoardFilters(
    tuple(kinds),
    tuple(access),
    tuple(families),
    tuple(teams),
    tuple(sizes),
    contamination=tuple(contamination),
    run_by=tuple(ran),
    judged=tuple(judged),
)
with st.spinner("Bootstrapping the top rows…"):
    view = boardview.view(
        db,
        info,
        sl=sl,
        slice_value=slice_value,
        groups=groups,
        filters=filters,
        sort_metric=sort_metric,
        interval_rows=int(interval_rows),
    )

provenance = view.provenance
st.header(
    info.title + (" — sample data" if provenance is not None and provenance.is_sample else "")
)
ui.task_caption(info)
ui.computing_note(db, info.task, info.split)
if provenance is not None:
    st.caption(ui.escape(provenance.label[:1].upper() + provenance.label[1:]) + ".")
    if provenance.caveat:
        st.warning(ui.escape(provenance.caveat))
# how this board differs from another board of its benchmark (openpi vs openpi-head), then what the task is
variant = overview.variant_notes(
    [TaskInfo.from_row(r) for r in sitedata.tasks(db).iter_rows(named=True)], ui.escape
).get(info.task)
if variant:
    st.caption(variant + ".")
judging = boardview.judges(view)
if judging:
    st.caption("Verdicts: " + "; ".join(ui.escape(j) for j in judging) + ".")
if info.description:
    with st.expander("About this task"):
        st.markdown(info.description)  # the project's own spec text
        st.page_link(
            "site_pages/task.py",
            label="The task's spec: data, licence, metrics, prediction format",
            query_params={"task": info.task},
        )
if sl is not None:
    st.subheader(
        f"Slice: {ui.escape(sl.name)} = {ui.escape(slice_value)}"
    )  # a stored value: escaped like any data
    st.caption(ui.escape(f"{sl.display}: {sl.value_label(slice_value)}"))
    if not sl.per_item:
        st.caption(
            "This slice re-scores every item against gold restricted to the slice's answers; the stored item scores are the whole split's, so it has no "
            "bootstrap intervals."
        )
if view.table.is_empty():
    st.info("No scores for this view yet.")
    st.stop()

metric = view.sort_metric
if view.requested:  # issue #30: the metric asked for is not defined on this slice value
    asked = info.metric(view.requested)
    st.info(
        f"{ui.escape(asked.display)} is not defined on {ui.escape(sl.name if sl else '')} = {ui.escape(slice_value)}: it counts only "
        f"{ui.escape(semantics.describe(info, asked).covers_text or 'other items')}, and this slice value holds none of them. "
        f"Ranked by {ui.escape(metric.display)} instead, the next of the task's rank metrics defined here."
    )
if view.undefined:
    st.caption(
        "Not defined on this slice value (no item they are computed over), so left empty: "
        + ", ".join(ui.escape(info.metric(n).display) for n in view.undefined)
        + "."
    )
details = st.toggle(
    "Show bookkeeping columns (team, kind, model card, items, source, date)",
    value=False,
    key="details",
    bind="query-params",
)
ci_column = boardlayout.ci_column(metric)
# issue #30: the ranking metric and its interval first (a 390-px phone shows them), the other metrics next, the card and
# bookkeeping columns apart, on demand; each corrected (bounded) variant beside the figure it corrects (issue #16)
order = boardlayout.order(
    info,
    view.table.columns,
    metric,
    details=details,
    kinds=view.table["Kind"].to_list(),
    contamination=view.table["Contamination"].to_list()
    if "Contamination" in view.table.columns
    else [],
    ties=view.table["Tie group"].to_list(),
    beside_bounded=boardview.beside_bounded(info, view.table.columns),
)
ui.table(
    view.table,
    column_order=order,
    column_config={
        "Rank": st.column_config.NumberColumn(
            "Rank",
            width=boardlayout.RANK_PX,
            help="rank by the chosen metric; '–': listed, not ranked (no value of the ranking metric)",
        ),
        "Model": st.column_config.TextColumn(
            "Model",
            width=ui.text_px(
                view.table["Model"].to_list(),
                min_px=boardlayout.MODEL_PX[0],
                max_px=boardlayout.MODEL_PX[1],
            ),
        ),
        "Details": st.column_config.LinkColumn(
            "Details",
            display_text="open",
            help="the submission: card, every metric and slice, history",
        ),
        "Kind": st.column_config.TextColumn(
            "Kind",
            help="submitted (scored here from its predictions) or reported (a paper's number, with its source)",
        ),
        "Contamination": st.column_config.TextColumn(
            "Contamination",
            help="the model card's word on the model's known exposure to this benchmark's data, with its source",
        ),
        "Run by": st.column_config.TextColumn(
            "Run by",
            help="who ran the model: the submitter, the board's operator, or a paper (reported row)",
        ),
        "Items": st.column_config.NumberColumn(help="items behind the figures of this row"),
        "Coverage": st.column_config.TextColumn(
            "Coverage",
            help="items of the split the file answered / items of the split; the rest count as the task's missing = ... convention says",
        ),
        "Paper": st.column_config.LinkColumn("Paper", display_text="paper"),
        "Code": st.column_config.LinkColumn("Code", display_text="code"),
        ci_column: st.column_config.TextColumn(
            boardlayout.CI_LABEL,
            help=f"{metric.display}: 95% percentile bootstrap interval over items (see the notes below when empty)",
        ),
        # wide enough for "best submitted" whole (issue #16: no cut cells)
        "Tie group": st.column_config.TextColumn(
            boardlayout.TIE_LABEL,
            width=ui.text_px(view.table["Tie group"].to_list(), min_px=boardlayout.RANK_PX),
            help="leader / best submitted, and the rows tied with it (see below)",
        ),
        **{
            name: column | {"width": boardlayout.header_px(name)}
            for name, column in ui.metric_columns(info.metrics).items()
        },
    },
    key="board-table",
)
if view.leader is not None and view.interval_rows <= 1:
    st.caption(
        f"Only one submitted row has a bootstrap interval in this view, so there is no tie group to test (paired bootstrap over items, "
        f"{config.N_RESAMPLES} resamples, seed {config.SEED}). Intervals are percentile bootstrap intervals over items, recomputed with the task's own "
        "aggregator."
    )
elif view.leader is not None:
    tied = len(view.tied)
    leader_row = view.export.filter(view.export["submission_id"] == view.leader).row(0, named=True)
    best = (
        "the leader"
        if view.table["Tie group"].to_list()[0] == "leader"
        else "the best submitted row"
    )
    best += (
        f" ({ui.escape(leader_row['model'])}, rank {leader_row['rank']})"
        if leader_row["rank"] is not None
        else f" ({ui.escape(leader_row['model'])})"
    )
    st.caption(
        f"Tie group: {tied} submission{'s' if tied != 1 else ''} among {ui.escape(view.scope)} cannot be separated from {best} on "
        f"{ui.escape(metric.display)} by a paired bootstrap over items ({config.N_RESAMPLES} resamples, seed {config.SEED}, p ≥ {config.ALPHA}). "
        "Intervals are percentile bootstrap intervals over items, recomputed with the task's own aggregator."
    )
if view.partial_unranked:  # issue #30: a partial file is ranked by the primary metric only
    primary = info.metric(info.primary)
    st.caption(
        f"{view.partial_unranked} partial row{'s are' if view.partial_unranked != 1 else ' is'} listed unranked, after the "
        f"full rows: the task ranks a file that answers part of the split only by {ui.escape(primary.display)}; ranked by "
        f"{ui.escape(metric.display)}, the items it left out would count as wrong answers (*Coverage* says how many it answered)."
    )
if view.shared:  # issue #30: equal values share a rank (competition ranking)
    st.caption(
        "Equal values share a rank (1, 1, 3): "
        + "; ".join(f"{n} rows share rank {r}" for r, n in sorted(view.shared.items()))
        + f" (equal {ui.escape(metric.display)}"
        + (
            ", and equal on the task's tie-breaks"
            if metric.name == info.primary and info.rank_by
            else ""
        )
        + ")."
    )
# issues #16, #30: figures above their metric's range, explained, with the corrected column beside them (the same note on every page)
above = [n for cell in view.export["above_range"].to_list() for n in cell.split("; ") if n]
if above:
    st.caption(ui.escape(semantics.above_range_note(info, above)))
notes = analysis.summarised(
    sorted(set(view.ci_notes.values()) - {""})
)  # Compare says it in the same words
if notes:
    st.caption("No interval where: " + "; ".join(ui.escape(n) for n in notes) + ".")
if any(j.startswith("self-judged") for j in judging):  # issue #17
    every = all(j.startswith("self-judged") for j in view.table["Judged by"].to_list())
    st.caption(
        "*Self-judged*: the verdicts came with the submitted file, not from the board's own judge; "
        + (
            "every row here is self-judged, so they are ranked together."
            if every
            else "those rows are ranked apart, in their own group after the others."
        )
    )
st.caption(
    "Scores in % where the metric is a fraction; hover a column's name for its definition. Reported rows are the papers' numbers (no per-item data, "
    "no intervals); *Items* (bookkeeping columns) is the number of items behind each row's figures."
)
ui.definitions(info, [m for m in info.metrics if m.display in view.table.columns])
ui.downloads(
    view.export,
    ui.file_stem("board", info.task, info.split, sl.name if sl else "", slice_value),
    key="board",
)
