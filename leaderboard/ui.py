"""Shared page pieces: the database guard, task pickers bound to the URL, escaping, downloads.

Every selector that defines a view is kept in a URL query parameter (:func:`url_choice`,
:func:`url_multi`, or ``bind="query-params"`` for plain inputs), so any view can be shared by
copying the address.
User-supplied text (model and team names, metadata, file contents) only ever reaches markdown
through :func:`escape`; nothing uses ``unsafe_allow_html``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import streamlit as st

from leaderboard import config, queries
from leaderboard.model import WHOLE_SPLIT, SliceInfo, TaskInfo

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&])")


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
        st.error(f"No database at {code(db)}. Build one with `procbench demo` or `procbench submit`.")
        st.stop()
    return db


def all_tasks(db: Path) -> pl.DataFrame:
    frame = queries.tasks(db)
    if frame.is_empty():
        st.info("No submissions yet. Upload one on the Upload page or with `procbench submit`.")
        st.stop()
    return frame


def url_choice(where: Any, label: str, options: list[Any], *, key: str, index: int = 0, format_func: Any = str, **kwargs: Any) -> Any:
    """A selectbox whose raw value (not its formatted label) lives in the URL parameter ``key``.

    (``bind="query-params"`` writes the formatted label to the URL; ids and metric names are
    better links.)  Without a widget key, the widget follows the URL whenever the URL changes.
    """
    current = st.query_params.get(key)
    if current in [str(o) for o in options]:
        index = [str(o) for o in options].index(current)
    value = where.selectbox(label, options, index=min(index, max(len(options) - 1, 0)), format_func=format_func, **kwargs)
    if value is not None:
        st.query_params[key] = str(value)
    return value


def url_multi(where: Any, label: str, options: list[Any], *, key: str, default: list[Any], format_func: Any = str, **kwargs: Any) -> list[Any]:
    """A multiselect whose raw values live in the repeated URL parameter ``key``."""
    present = key in st.query_params
    chosen = [o for o in options if str(o) in st.query_params.get_all(key)] if present else list(default)
    value = where.multiselect(label, options, default=chosen, format_func=format_func, **kwargs)
    st.query_params[key] = [str(v) for v in value]
    return value


def pick_task(db: Path, *, container: Any = None) -> TaskInfo:
    """Task and split selectors (URL parameters ``task`` and ``split``)."""
    where = container or st.sidebar
    frame = all_tasks(db)
    names = list(dict.fromkeys(frame["task"].to_list()))
    task = url_choice(where, "Task", names, key="task")
    splits = frame.filter(pl.col("task") == task)["split"].to_list()
    split = url_choice(where, "Split", splits, key="split")
    row = frame.filter((pl.col("task") == task) & (pl.col("split") == split)).row(0, named=True)
    return TaskInfo.from_row(row)


def pick_slice(db: Path, info: TaskInfo, *, container: Any = None, allow_answer_label: bool = True, key: str = "slice") -> tuple[SliceInfo | None, str]:
    """A selector for every slice dimension the spec declares, then its value (``slice``, ``value``)."""
    where = container or st.sidebar
    slices = [s for s in info.slices if allow_answer_label or s.per_item]
    names = [WHOLE_SPLIT, *(s.name for s in slices)]
    labels = {s.name: f"{s.name}: {s.display}" for s in slices}
    chosen = url_choice(where, "Slice", names, key=key, format_func=lambda n: labels.get(n, n))
    sl = info.slice(chosen) if chosen != WHOLE_SPLIT else None
    if sl is None:
        return None, ""
    values = queries.slice_values(db, info.task, info.split, sl.name)
    if not values:
        where.caption("No values stored for this slice.")
        return sl, ""
    value = url_choice(where, "Slice value", values, key="value")
    return sl, value if value in values else values[0]


def task_caption(info: TaskInfo) -> None:
    hidden = " · **hidden split**: per-item scores and gold are never shown" if info.hidden else ""
    st.caption(f"task {code(info.task)} · split {code(info.split)} · version {escape(info.version)} · fingerprint {code(info.fingerprint[:12])}{hidden}")


def submission_label(row: dict[str, Any]) -> str:
    kind = "reported" if row.get("is_reference") else "submitted"
    return f"{row['model']} — {row['team']} ({kind}, {row['submission_id'][:8]})"


def downloads(frame: pl.DataFrame, stem: str, *, key: str = "") -> None:
    """CSV and JSON downloads of a frame (values as stored, not rounded for display)."""
    left, right = st.columns(2)
    csv = frame.write_csv()
    rows = json.dumps(frame.to_dicts(), default=str, indent=1)
    left.download_button("Download CSV", csv, file_name=f"{stem}.csv", mime="text/csv", key=f"csv-{key or stem}")
    right.download_button("Download JSON", rows, file_name=f"{stem}.json", mime="application/json", key=f"json-{key or stem}")


def file_stem(*parts: str) -> str:
    return "-".join(re.sub(r"[^A-Za-z0-9_.]+", "_", p) for p in parts if p)
