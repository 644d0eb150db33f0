"""Charts: per-slice bars, a radar of metrics (each on its own scale), seen vs unseen, progress over time.

One colour per system on the page; series keyed by submission; missing values left out; a chart
across slice values is drawn only for a metric that measures the same quantity on each value
(``TaskInfo.comparable_across``: not a text-only score on vision questions, not a sum).

Each chart's Vega-Lite spec is built once per store version and choice of the page (``cache.memo``,
``plots.vega_lite``) and drawn from there: a warm view builds, validates and serialises no chart again.
"""

from __future__ import annotations

import polars as pl
import streamlit as st

from procbench.leaderboard import analysis, cache, plots, progress, semantics, sitedata, ui
from procbench.leaderboard.model import TaskInfo

TOP_SYSTEMS = 6
MAX_RADAR_AXES = 12
PARAMS = ("task", "split", "systems", "metric", "bars", "errorbars", "radar", "pair")

db = ui.database()
ui.check_params(PARAMS)
info: TaskInfo = ui.pick_task(db)
st.header(f"Charts — {info.title}")
ui.task_caption(info)

primary = info.primary_metric


def _candidates() -> tuple[dict[str, dict], dict[str, str]]:
    """The board's submissions, best first (id -> row), and their picker labels."""
    frame = sitedata.submissions_of(db, info.task, info.split).sort(
        "primary_value", descending=primary.higher_is_better, nulls_last=True
    )
    by_id = {r["submission_id"]: r for r in frame.iter_rows(named=True)}
    return by_id, {sid: ui.submission_label(r) for sid, r in by_id.items()}


rows, labels = cache.memo(db, "charts.candidates", (info.task, info.split), _candidates)
ids = list(labels)
# issue #30: by default the best systems with per-item data (submitted rows); papers' rows have none, so on PARADISE (papers on top)
# every chart opened empty. A board of papers' rows alone still opens on them.
with_items = [s for s in ids if not rows[s]["is_reference"]]
systems = ui.url_multi(
    st.sidebar,
    "Systems",
    ids,
    key="systems",
    default=(with_items or ids)[:TOP_SYSTEMS],
    format_func=lambda s: labels.get(s, s),
    help="default: the best systems with per-item data (submitted rows); papers' rows have whole-split figures only",
)
metric_name = ui.metric_choice(st.sidebar, info)
metric = info.metric(metric_name)
st.caption(f"**{ui.escape(metric.display)}**: {ui.escape(ui.metric_help(metric))}")
sem = semantics.describe(
    info, metric
)  # range and bounded variant: the one description every page reads (issue #30)
if not systems:
    st.info("Choose systems in the sidebar.")
    st.stop()
names = ui.system_names([rows[s] for s in systems])  # one series per submission, unique names
unit = " (%)" if metric.percent else ""
chosen = (
    info.task,
    info.split,
    tuple(systems),
)  # what every chart below depends on, besides its own choices and the store


def colours() -> object:
    """One colour per system on every chart of the page (built only when a chart is)."""
    return ui.colour_scale([names[s] for s in systems])


# -- per-slice bars -------------------------------------------------------------------------------
st.subheader("Per-slice bars")
if not info.slices:
    st.caption("This task declares no slices.")
else:
    slice_names = [s.name for s in info.slices]
    bar_slice = ui.url_choice(
        st,
        "Slice dimension",
        slice_names,
        key="bars",
        format_func=lambda n: ui.slice_choice_label(info.slice(n)),  # type: ignore[arg-type]
    )
    sl = info.slice(bar_slice)
    assert sl is not None
    if not info.comparable_across(metric.name, sl):
        st.caption(
            f"{ui.escape(metric.display)} is not the same quantity on every value of {ui.code(sl.name)} (it is defined on some values only, or it is a "
            "sum that grows with the number of items), so it is not plotted across them. Choose another metric."
        )
    else:
        with_ci = st.toggle(
            "95% bootstrap error bars",
            value=False,
            key="errorbars",
            bind="query-params",
            help="recomputed with the task's aggregator over each slice's items; slow on first view, then cached",
        )

        def _bars() -> tuple[dict | None, str]:
            """The bars' spec (None without a value to draw) and the caption of items per slice value."""
            assert sl is not None
            long = sitedata.slice_table(db, info.task, info.split, bar_slice, systems).filter(
                pl.col("metric") == metric.name
            )
            bar_rows = []
            for r in long.iter_rows(named=True):
                low = high = None
                if with_ci and not r["is_reference"]:
                    # the board's interval (over the items the metric covers; none where every resample is one value: issue #30)
                    found = analysis.uncertainty(
                        db, info, r["submission_id"], metric.name, sl=sl, value=r["slice_value"]
                    ).interval
                    if found is not None:
                        low, high = metric.shown(found.low), metric.shown(found.high)
                bar_rows.append(
                    {
                        "system": names[r["submission_id"]],
                        "slice_value": sl.value_label(r["slice_value"]),
                        "value": metric.shown(r["value"]),
                        "n_items": r["n_items"],
                        "low": low,
                        "high": high,
                    }
                )
            frame = pl.DataFrame(
                bar_rows,
                schema={
                    "system": pl.String,
                    "slice_value": pl.String,
                    "value": pl.Float64,
                    "n_items": pl.Int64,
                    "low": pl.Float64,
                    "high": pl.Float64,
                },
            )
            if frame.filter(pl.col("value").is_not_null()).is_empty():
                return None, ""
            above = sorted(
                {
                    names[r["submission_id"]]
                    for r in long.iter_rows(named=True)
                    if sem.above(r["value"])
                }
            )
            counts = frame.group_by("slice_value").agg(pl.col("n_items").max()).sort("slice_value")
            caption = f"{ui.escape(sl.display)}. Items per slice value: " + ", ".join(
                f"{ui.escape(v)} = {n}" for v, n in counts.iter_rows()
            )
            if above:  # issue #30: flagged on every page, with the bounded variant named
                caption += " — above its range for " + ", ".join(ui.escape(a) for a in above) + ". "
                caption += ui.escape(semantics.above_range_note(info, [metric.name]))
            return plots.vega_lite(
                plots.slice_bars(frame, metric.display + unit, scale=colours())  # type: ignore[arg-type]
            ), caption

        # the interval floor is an operator's setting (analysis.min_interval_items): part of what the bars show
        bars_key = (
            *chosen,
            metric.name,
            bar_slice,
            with_ci,
            analysis.min_interval_items() if with_ci else 0,
        )
        bars_spec, bars_caption = cache.memo(db, "charts.bars", bars_key, _bars)
        if bars_spec is None:
            st.caption("No slice figures stored for these systems.")
        else:
            st.vega_lite_chart(bars_spec, width="stretch")
            st.caption(bars_caption)

# -- radar of metric groups -----------------------------------------------------------------------
st.subheader("Radar of metric groups")
default_groups: list[str] = []
axes_count = 0
for group in info.groups:
    size = sum(1 for m in info.metrics if m.group == group)
    if axes_count + size > MAX_RADAR_AXES:
        break
    default_groups.append(group)
    axes_count += size
radar_groups = st.multiselect(
    "Metric groups on the radar",
    info.groups,
    default=default_groups,
    key="radar",
    bind="query-params",
)
axes = [m for m in info.metrics if m.group in radar_groups]
if len(axes) < 3:
    st.caption("A radar needs at least three metrics: choose more groups.")
else:

    def _radar() -> tuple[dict, int, list[str]]:
        """The radar's spec and how many values are missing from it."""
        whole = sitedata.slice_table(db, info.task, info.split, "", systems)
        values = {
            (r["submission_id"], r["metric"]): r["value"] for r in whole.iter_rows(named=True)
        }
        points = [
            {"system": names[sid], "axis": m.display, "value": m.shown(values.get((sid, m.name)))}
            for sid in systems
            for m in axes
        ]
        frame = pl.DataFrame(
            points, schema={"system": pl.String, "axis": pl.String, "value": pl.Float64}
        )
        above = [
            m.name
            for m in axes
            if any(semantics.describe(info, m).above(values.get((sid, m.name))) for sid in systems)
        ]
        scales = plots.axis_scales(
            frame, [m.display for m in axes], {m.display: 100.0 for m in axes if m.percent}
        )
        chart = plots.radar(frame, [m.display for m in axes], scales=scales, scale=colours())  # type: ignore[arg-type]
        return plots.vega_lite(chart), frame.filter(pl.col("value").is_null()).height, above

    radar_spec, missing, radar_above = cache.memo(
        db, "charts.radar", (*chosen, tuple(radar_groups)), _radar
    )
    st.vega_lite_chart(radar_spec)
    st.caption(
        "Whole-split values; every axis has its own scale, from 0 at the centre to the value in its label at the rim (100 for a % metric, else the "
        "largest value shown)."
        + (
            f" Missing values are left out (the polygon is broken there): {missing}."
            if missing
            else ""
        )
    )
    if radar_above:
        st.caption(ui.escape(semantics.above_range_note(info, radar_above)))

# -- seen vs unseen -------------------------------------------------------------------------------
st.subheader("Seen vs unseen")


def _pairs() -> list[str]:
    """The slices with exactly two values on which the metric measures the same quantity."""
    return [
        s.name
        for s in info.slices
        if len(sitedata.slice_values(db, info.task, info.split, s.name)) == 2
        and info.comparable_across(metric.name, s)
    ]


pair_names = cache.memo(db, "charts.pairs", (info.task, info.split, metric.name), _pairs)
if not pair_names:
    st.caption(
        "No slice of this task has exactly two values on which this metric measures the same quantity (OpenPI's `domain` slice compares seen and "
        "unseen categories)."
    )
else:
    default = pair_names.index("domain") if "domain" in pair_names else 0
    pair = ui.url_choice(st, "Two-valued slice", pair_names, index=default, key="pair")

    def _seen_unseen() -> dict | None:
        """The scatter's spec, None when no system has figures on both values."""
        pair_slice = info.slice(pair)
        assert pair_slice is not None
        first, second = sitedata.slice_values(db, info.task, info.split, pair)
        if pair == "domain" and {first, second} == {"seen", "unseen"}:
            first, second = "seen", "unseen"
        long = sitedata.slice_table(db, info.task, info.split, pair, systems).filter(
            pl.col("metric") == metric.name
        )
        scatter: dict[str, dict[str, object]] = {}
        for r in long.iter_rows(named=True):
            entry = scatter.setdefault(
                r["submission_id"],
                {
                    "system": names[r["submission_id"]],
                    "x": None,
                    "y": None,
                    "n_x": None,
                    "n_y": None,
                },
            )
            axis = "x" if r["slice_value"] == first else "y"
            entry[axis] = metric.shown(r["value"])
            entry[f"n_{axis}"] = r["n_items"]
        frame = pl.DataFrame(
            list(scatter.values()),
            schema={
                "system": pl.String,
                "x": pl.Float64,
                "y": pl.Float64,
                "n_x": pl.Int64,
                "n_y": pl.Int64,
            },
        )
        if frame.drop_nulls(["x", "y"]).is_empty():
            return None
        x_title = f"{metric.display}{unit} on {pair_slice.value_label(first)}"
        y_title = f"{metric.display}{unit} on {pair_slice.value_label(second)}"
        return plots.vega_lite(plots.seen_unseen(frame, x_title, y_title, scale=colours()))  # type: ignore[arg-type]

    scatter_spec = cache.memo(db, "charts.seen_unseen", (*chosen, metric.name, pair), _seen_unseen)
    if scatter_spec is None:
        st.caption("No system has figures on both values.")
    else:
        st.vega_lite_chart(scatter_spec, width="stretch")
        st.caption(
            "Points below the dashed diagonal do worse on the second value than on the first."
        )

# -- progress over time ---------------------------------------------------------------------------
st.subheader("Progress over time")


def _progress() -> tuple[dict | None, str]:
    """The progress chart's spec over every row of the board at the date its result was produced (None with fewer than two), and its caption."""
    rows = sitedata.primary_rows(db).filter(
        (pl.col("task") == info.task) & (pl.col("split") == info.split)
    )
    dated = progress.history(
        rows, higher_is_better=primary.higher_is_better, scale=100 if primary.percent else 1
    )
    caption = dated.caption(ui.escape(primary.display))
    if dated.frame.height < 2:
        return None, caption
    title = primary.display + (" (%)" if primary.percent else "")
    return plots.vega_lite(plots.progress(dated.frame, title)), caption


progress_spec, progress_caption = cache.memo(
    db, "charts.progress", (info.task, info.split), _progress
)
if progress_spec is None:
    st.caption(f"Fewer than two dated rows: nothing to draw yet. {progress_caption}")
else:
    st.vega_lite_chart(progress_spec, width="stretch")
    st.caption(progress_caption)
