"""Shared page pieces: the database guard, pickers bound to the URL, tables, labels, colours, escaping, downloads.

Every selector that defines a view is kept in a URL query parameter (:func:`url_choice`,
:func:`url_multi`, or ``bind="query-params"`` for plain inputs), so any view can be shared by
copying the address.  A parameter the page does not know, or a value that names nothing (a mistyped
task), is said so on the page (:func:`check_params`, :func:`url_choice`): the site never silently
shows another view than the address asks for.
User-supplied text (model and team names, metadata, file contents) only ever reaches markdown
through :func:`escape`; nothing uses ``unsafe_allow_html``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import streamlit as st

from procbench.leaderboard import config, sitedata
from procbench.leaderboard.metadata import Card
from procbench.leaderboard.model import WHOLE_SPLIT, MetricInfo, SliceInfo, TaskInfo

if TYPE_CHECKING:
    import altair as alt

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&])")
MISSING = "–"  # what a table shows where there is no value (never the literal "None")
ROW_PX = 35  # Streamlit's data-grid row height
MAX_TABLE_PX = 1800  # taller tables scroll inside their frame (every row is still there)
STREAMLIT_PARAMS = frozenset({"embed", "embed_options"})  # Streamlit's own
# One colour per system on a page: systems take colours in the order they are listed (Tableau 20).
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
    "#a0cbe8",
    "#ffbe7d",
    "#ff9d9a",
    "#86bcb6",
    "#8cd17d",
    "#f1ce63",
    "#d4a6c8",
    "#fabfd2",
    "#d7b5a6",
    "#79706e",
)
UNITS_NOTE = (
    "Downloads hold raw values: fractions in [0, 1] for metrics the board shows in % (multiply by 100 to get the board's figures), "
    "the metric's own unit otherwise (counts, points); intervals are in the metric's unit too."
)


_DIGIT_RUNS = re.compile(r"([0-9]+)")


def natural_key(text: Any) -> tuple[tuple[int, int, str], ...]:
    """A sort key reading each run of digits as a number: ``"2"`` before ``"10"``, ``"cat01_2"`` before ``"cat01_10"``.

    Issue #30: item ids sorted as strings listed "10" before "2".  Numbers compare by their length without
    leading zeros, then their digits (no ``int()``: an id of 5,000 digits is still just an id).
    """
    parts = []
    for part in _DIGIT_RUNS.split(str(text)):
        if not part:
            continue
        if part[0].isascii() and part[0].isdigit():
            digits = part.lstrip("0") or "0"
            parts.append(
                (0, len(digits), digits + "\x00" + part)
            )  # equal numbers: "01" after "1", so the order is total
        else:
            parts.append((1, 0, part))
    return tuple(parts)


def escape(text: Any) -> str:
    """Text safe to put inside Streamlit markdown: every markdown/HTML metacharacter backslash-escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text)).replace("\n", " ")


def code(text: Any) -> str:
    """Inline code markdown for text (backticks removed: inside a code span nothing else is interpreted)."""
    return "`" + str(text).replace("`", "'").replace("\n", " ") + "`"


def database() -> Path:
    """The store, or stop the page with a message when there is none."""
    db = config.database()
    if not db.exists():
        st.error(
            f"No database at {code(db)}. Build one with `procbench demo` or `procbench submit`."
        )
        st.stop()
    return db


def all_tasks(db: Path) -> pl.DataFrame:
    frame = sitedata.tasks(db)
    if frame.is_empty():
        st.info("No submissions yet. Upload one on the Upload page or with `procbench submit`.")
        st.stop()
    return frame


# -- the address -----------------------------------------------------------------------------------


def check_params(known: Iterable[str]) -> list[str]:
    """Say which URL parameters this page does not know (a typo such as ``tsak=`` would otherwise be ignored)."""
    allowed = set(known) | STREAMLIT_PARAMS
    unknown = sorted(k for k in st.query_params.keys() if k not in allowed)
    if unknown:
        st.warning(
            f"This page does not know the address parameter{'s' if len(unknown) > 1 else ''} "
            + ", ".join(code(k) for k in unknown)
            + f"; it understands {', '.join(code(k) for k in sorted(set(known)))}."
        )
    return unknown


def note_unknown_values(choices: Mapping[str, tuple[str, Sequence[Any]]]) -> dict[str, list[str]]:
    """Name every value of a repeated URL parameter that none of its control's options matches, with the allowed ones.

    ``choices``: URL key -> (the control's label, its options).  A control bound to the URL
    (``bind="query-params"``) drops a value it does not offer without a word (``kind=submited`` showed
    every row, as if unfiltered), so call this *before* the controls.  Returns key -> the unknown values.
    """
    found: dict[str, list[str]] = {}
    for key, (label, options) in choices.items():
        if key not in st.query_params:
            continue
        allowed = list(dict.fromkeys(str(o) for o in options))
        unknown = [v for v in dict.fromkeys(st.query_params.get_all(key)) if v not in allowed]
        if not unknown:
            continue
        found[key] = unknown
        listed = ", ".join(code(v) for v in allowed[:30]) + (
            f" (and {len(allowed) - 30} more)" if len(allowed) > 30 else ""
        )
        st.warning(
            f"Unknown {escape(label.lower())} {', '.join(code(v) for v in unknown)} in the address ({code(key)}): left out, "
            f"so {'this filter shows every row' if len(unknown) == len(st.query_params.get_all(key)) else 'only the known values filter'}. "
            f"The values here: {listed or 'none on this view'}."
        )
    return found


def note_bad_whole_number(key: str, label: str, low: int, high: int, default: int) -> str | None:
    """Name a URL value of a bound number input that is not a whole number in ``[low, high]`` (the control would show its default silently)."""
    if key not in st.query_params:
        return None
    text = st.query_params.get(key, "")
    try:
        number = int(text)
    except ValueError:
        number = None
    if number is not None and low <= number <= high:
        return None
    st.warning(
        f"{escape(label)}: {code(text)} in the address ({code(key)}) is not a whole number from {low} to {high}; showing {default}."
    )
    return text


def url_choice(
    where: Any,
    label: str,
    options: list[Any],
    *,
    key: str,
    index: int = 0,
    format_func: Any = str,
    strict: bool = False,
    **kwargs: Any,
) -> Any:
    """A selectbox whose raw value (not its formatted label) lives in the URL parameter ``key``.

    (``bind="query-params"`` writes the formatted label to the URL; ids and metric names are
    better links.)  Without a widget key, the widget follows the URL whenever the URL changes.
    A URL value that is not among ``options`` is reported: with ``strict`` (the task of a board) the
    page stops until one is chosen, so a mistyped address never shows another board; otherwise
    the default is shown, with a warning naming what was asked for.
    """
    texts = [str(o) for o in options]
    current = st.query_params.get(key)
    if current in texts:
        index = texts.index(current)
    elif current is not None and current != "":
        if strict:
            st.error(
                f"No {escape(label.lower())} {code(current)} on this site. Choose one of: {', '.join(code(t) for t in texts[:30])}."
            )
            value = where.selectbox(
                label, options, index=None, format_func=format_func, placeholder="choose…", **kwargs
            )
            if value is None:
                st.stop()
            st.query_params[key] = str(value)
            return value
        shown = texts[min(index, max(len(texts) - 1, 0))] if texts else ""
        st.warning(
            f"Unknown {escape(label.lower())} {code(current)} in the address: showing {code(shown)} instead."
        )
    value = where.selectbox(
        label,
        options,
        index=min(index, max(len(options) - 1, 0)),
        format_func=format_func,
        **kwargs,
    )
    if value is not None:
        st.query_params[key] = str(value)
    return value


def metric_choice(where: Any, info: Any) -> str:
    """The sidebar's metric picker (URL parameter ``metric``): the task's metrics by display name, the primary first chosen."""
    names = [m.name for m in info.metrics] or [info.primary]
    return str(
        url_choice(
            where,
            "Metric",
            names,
            index=names.index(info.primary) if info.primary in names else 0,
            key="metric",
            format_func=lambda n: info.metric(n).display,
        )
    )


def url_multi(
    where: Any,
    label: str,
    options: list[Any],
    *,
    key: str,
    default: list[Any],
    format_func: Any = str,
    **kwargs: Any,
) -> list[Any]:
    """A multiselect whose raw values live in the repeated URL parameter ``key`` (unknown values are reported)."""
    present = key in st.query_params
    asked = st.query_params.get_all(key) if present else []
    texts = {str(o) for o in options}
    unknown = [a for a in asked if a not in texts]
    if unknown:
        st.warning(
            f"Unknown {escape(label.lower())} in the address, left out: {', '.join(code(u) for u in unknown)}."
        )
    chosen = [o for o in options if str(o) in asked] if present else list(default)
    value = where.multiselect(label, options, default=chosen, format_func=format_func, **kwargs)
    st.query_params[key] = [str(v) for v in value]
    return value


def pick_task(db: Path, *, container: Any = None) -> TaskInfo:
    """Task and split selectors (URL parameters ``task`` and ``split``); an unknown task stops the page."""
    where = container or st.sidebar
    frame = all_tasks(db)
    names = list(dict.fromkeys(frame["task"].to_list()))
    task = url_choice(where, "Task", names, key="task", strict=True)
    splits = frame.filter(pl.col("task") == task)["split"].to_list()
    split = url_choice(where, "Split", splits, key="split", strict=True)
    row = frame.filter((pl.col("task") == task) & (pl.col("split") == split)).row(0, named=True)
    return TaskInfo.from_row(row)


def slice_choice_label(sl: SliceInfo) -> str:
    return f"{sl.name}: {sl.display}" if sl.display and sl.display != sl.name else sl.name


def pick_slice(
    db: Path,
    info: TaskInfo,
    *,
    container: Any = None,
    allow_answer_label: bool = True,
    key: str = "slice",
) -> tuple[SliceInfo | None, str]:
    """A selector for every slice dimension the spec declares, then its value (``slice``, ``value``)."""
    where = container or st.sidebar
    slices = [s for s in info.slices if allow_answer_label or s.per_item]
    names = [WHOLE_SPLIT, *(s.name for s in slices)]
    labels = {s.name: slice_choice_label(s) for s in slices}
    chosen = url_choice(where, "Slice", names, key=key, format_func=lambda n: labels.get(n, n))
    sl = info.slice(chosen) if chosen != WHOLE_SPLIT else None
    if sl is None:
        return None, ""
    values = sitedata.slice_values(db, info.task, info.split, sl.name)
    if not values:
        where.caption("No values stored for this slice.")
        return sl, ""
    value = url_choice(where, "Slice value", values, key="value", format_func=sl.value_label)
    return sl, value if value in values else values[0]


def computing_note(db: Path, task: str | None = None, split: str | None = None) -> None:
    """Say which rows are still being computed (of one board, or all on Home), so a board never looks complete before it is."""
    for row in sitedata.pending(
        db, task, split
    ):  # cached per store version: a warm view reads nothing
        where = "" if task else f" for {row.task} ({row.split})"
        started = f", started {row.started_at:%H:%M} UTC" if row.started_at is not None else ""
        st.info(
            f"Computing{escape(where)}: {escape(row.what)}{started}. Its row appears here once it is stored; reload to see it.",
            icon="⏳",
        )


def task_caption(info: TaskInfo) -> None:
    hidden = " · **hidden split**: per-item scores and gold are never shown" if info.hidden else ""
    st.caption(
        f"task {code(info.task)} · split {code(info.split)} · version {escape(info.version)} · fingerprint {code(info.fingerprint[:12])}{hidden}"
    )


def submission_label(row: Mapping[str, Any]) -> str:
    kind = "reported" if row.get("is_reference") else "submitted"
    return f"{row['model']} — {row['team']} ({kind}, {row['submission_id'][:8]})"


# -- tables ----------------------------------------------------------------------------------------


def table(
    frame: pl.DataFrame,
    *,
    column_config: Mapping[str, Any] | None = None,
    column_order: Sequence[str] | None = None,
    key: str | None = None,
) -> None:
    """A full-width table that shows every row (taller tables scroll inside) and "–" where a value is missing."""
    height = min(ROW_PX * (frame.height + 1) + 3, MAX_TABLE_PX)
    st.dataframe(
        frame.to_arrow(),  # an Arrow table goes to the browser as it is; a polars frame would make Streamlit import pandas (cold start)
        hide_index=True,
        width="stretch",
        height=max(height, ROW_PX * 2 + 3),
        column_config=dict(column_config or {}),
        column_order=list(column_order) if column_order is not None else None,
        placeholder=MISSING,
        key=key,
    )


def text_px(values: Iterable[object] | pl.Series, *, min_px: int = 140, max_px: int = 440) -> int:
    """A text column's width in pixels that shows its longest value whole (within bounds): no cut model names.

    A polars Series of strings is measured without a Python string per row (Home's grid: 100 000 models).
    """
    if isinstance(values, pl.Series) and values.dtype == pl.String:
        found = values.str.len_chars().max()
        longest = found if isinstance(found, int) else 0
    else:
        longest = max((len(str(v)) for v in values if v is not None), default=0)
    return int(min(max_px, max(min_px, 7.5 * longest + 28)))


def metric_help(metric: MetricInfo) -> str:
    """A metric's definition from its spec, with its direction and unit (the column's tooltip)."""
    unit = "shown in %" if metric.percent else "in the metric's own unit"
    direction = "higher is better" if metric.higher_is_better else "lower is better"
    definition = metric.description.strip() or "(the spec gives no definition)"
    return f"{definition} — {direction}; {unit}."


def metric_columns(metrics: Iterable[MetricInfo], *, fmt: str = "%.2f") -> dict[str, Any]:
    return {
        m.display: st.column_config.NumberColumn(m.display, format=fmt, help=metric_help(m))
        for m in metrics
    }


def definition_lines(metrics: Iterable[MetricInfo]) -> str:
    """Every metric's definition from its spec as a markdown list, whole (a table cell would cut a long definition)."""
    return "\n".join(
        f"- {escape(m.display)} ({code(m.name)}): {escape(m.description.strip() or '(the spec gives no definition)')} "
        f"\\({'higher' if m.higher_is_better else 'lower'} is better; {'shown in %' if m.percent else 'in its own unit'}\\)"
        for m in metrics
    )


def definitions(
    info: TaskInfo, metrics: Iterable[MetricInfo] | None = None, *, expanded: bool = False
) -> None:
    """An expander with every shown metric's definition and every slice's values, as the spec states them."""
    chosen = list(metrics if metrics is not None else info.metrics)
    with st.expander("What the columns mean", expanded=expanded):
        st.markdown(definition_lines(chosen))
        if info.slices:
            st.caption(
                "Slices: "
                + "; ".join(
                    f"{code(s.name)} — {escape(s.display)}" + _value_list(s) for s in info.slices
                )
            )


def _value_list(sl: SliceInfo) -> str:
    """A slice's labelled values as the caption lists them: `` (`cat01` = C1 PCo: process context, ...)``; '' without labels."""
    return (
        " ("
        + ", ".join(f"{code(v)} = {escape(label)}" for v, label in sl.value_labels.items())
        + ")"
        if sl.value_labels
        else ""
    )


# -- systems in charts -------------------------------------------------------------------------------


def system_names(rows: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Submission id -> a series name unique on the page: the model, then its team, then its short id where names repeat."""
    out: dict[str, str] = {}
    by_model: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_model.setdefault(str(row["model"]), []).append(row)
    for model, same in by_model.items():
        teams = [str(r.get("team") or "") for r in same]
        for row, team in zip(same, teams):
            name = model
            if len(same) > 1:
                name = (
                    f"{model} — {team}"
                    if teams.count(team) == 1
                    else f"{model} — {team} · {str(row['submission_id'])[:8]}"
                )
            if row.get("is_reference") and "(reported)" not in name:
                name += " [reported]"
            out[str(row["submission_id"])] = name
    return out


def colour_scale(names: Sequence[str]) -> alt.Scale:
    """One colour per system for every chart of a page (the same domain and range everywhere)."""
    import altair as alt  # only the Charts page draws: the other pages start without it

    ordered = list(dict.fromkeys(names))
    return alt.Scale(domain=ordered, range=[PALETTE[i % len(PALETTE)] for i in range(len(ordered))])


# -- model cards -------------------------------------------------------------------------------------


def card_table(card: Card, *, key: str) -> None:
    """The model card, the same on the board's rows, the Submission page and the model page."""
    rows = card.rows()
    table(
        pl.DataFrame(
            {"Field": [r[0] for r in rows], "Value": [r[1] for r in rows]},
            schema={"Field": pl.String, "Value": pl.String},
        ),
        key=key,
    )
    if card.paper_url or card.code_url:
        links = [
            f"[paper]({card.paper_url})" if card.paper_url else "",
            f"[code]({card.code_url})" if card.code_url else "",
        ]
        st.markdown(" · ".join(x for x in links if x))  # plain http(s) URLs only (metadata.card)


# -- downloads ---------------------------------------------------------------------------------------


def downloads(frame: pl.DataFrame, stem: str, *, key: str = "", note: str = UNITS_NOTE) -> None:
    """CSV and JSON downloads of a frame (values as stored: fractions, not %), with the units note."""
    left, right = st.columns(2)
    # Deferred: the files are written when a visitor clicks, not on every view (serialising Home's tables as JSON
    # on each run was half of a warm view's server CPU on a 10 000-submission store; `make bench-site`).
    left.download_button(
        "Download CSV",
        lambda: frame.write_csv(),
        file_name=f"{stem}.csv",
        mime="text/csv",
        key=f"csv-{key or stem}",
    )
    right.download_button(
        "Download JSON",
        lambda: json.dumps(frame.to_dicts(), default=str, indent=1),
        file_name=f"{stem}.json",
        mime="application/json",
        key=f"json-{key or stem}",
    )
    if note:
        st.caption(note)


def as_fractions(frame: pl.DataFrame, metrics: Iterable[MetricInfo]) -> pl.DataFrame:
    """A display frame back in stored units (÷100 for % metrics), columns renamed to metric names, for downloads."""
    out = frame
    for m in metrics:
        if m.display in out.columns:
            out = out.with_columns(
                (pl.col(m.display) / (100 if m.percent else 1)).alias(m.display)
            ).rename({m.display: m.name})
    return out


def file_stem(*parts: str) -> str:
    return "-".join(re.sub(r"[^A-Za-z0-9_.]+", "_", p) for p in parts if p)
