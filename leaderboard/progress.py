"""Progress over time: each row at the date its result was produced, not the date it was stored (issue #30).

A paper's row is dated by its paper (the ``date`` of its reported table, metadata ``date``); a row whose
metadata gives its model's release (``released``: ``procbench demo`` reads the date in an upstream
PM-LLM model's name) by that release; an upload by its submission time, and a baseline the board's operator
ran (``run_by = operator``) by the time it ran (stored), each named in the legend.  A row imported from elsewhere without a known date (metadata
``imported``) is left out and counted, never drawn at its import time: fifteen upstream models stored
within seconds drew a best-so-far line that only showed the import order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import polars as pl

PAPER = "paper's date"
RELEASE = "model release"
SUBMITTED = "submission time (upload)"
BASELINE = "run time (baseline)"  # a row the board's operator ran (run_by = operator): produced when stored
SOURCES = (PAPER, RELEASE, SUBMITTED, BASELINE)  # the legend's order

_DATE = re.compile(r"((?:19|20)\d\d)-(0[1-9]|1[0-2])(?:-(0[1-9]|[12]\d|3[01]))?")


def parse_date(text: Any) -> datetime | None:
    """YYYY-MM or YYYY-MM-DD (a month is dated by its first day) as a naive UTC datetime; None for anything else."""
    found = _DATE.fullmatch(text.strip()) if isinstance(text, str) and len(text) <= 16 else None
    if found is None:
        return None
    try:
        return datetime(int(found.group(1)), int(found.group(2)), int(found.group(3) or 1))
    except ValueError:  # 2023-02-30
        return None


def _naive_utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo is not None else moment


def produced(row: Mapping[str, Any]) -> tuple[datetime | None, str]:
    """When ``row``'s result was produced and how that is known (one of ``SOURCES``); (None, '') when it is not known."""
    try:
        metadata = json.loads(row.get("metadata_json") or "{}")
    except (TypeError, ValueError):
        metadata = {}
    metadata = metadata if isinstance(metadata, dict) else {}
    if row.get("is_reference"):
        date = parse_date(metadata.get("date"))
        return (date, PAPER) if date is not None else (None, "")
    released = parse_date(metadata.get("released"))
    if released is not None:
        return released, RELEASE
    if metadata.get("imported") or row.get("created_at") is None:
        return None, ""
    # issue #30 (real-data review): the operator's baselines are not uploads; the legend says which of the two a point is
    return _naive_utc(row["created_at"]), BASELINE if row.get("run_by") == "operator" else SUBMITTED


@dataclass(frozen=True)
class History:
    """The chart's rows (``produced_at``, ``value``, ``best``, ``system``, ``date_source``), by date, and what was left out."""

    frame: pl.DataFrame
    left_out: int  # rows with a value but no known production date

    def caption(self, metric: str) -> str:
        counts = self.frame["date_source"].value_counts() if self.frame.height else None
        by = dict(counts.iter_rows()) if counts is not None else {}
        dated = ", ".join(f"{by[s]} by {s}" for s in SOURCES if by.get(s))
        text = f"Each point is a row's {metric} at the date its result was produced ({dated or 'none'}); the line is the best so far."
        if self.left_out:
            text += f" {self.left_out} imported row{'s' if self.left_out != 1 else ''} without a known date {'are' if self.left_out != 1 else 'is'} left out."
        return text


SCHEMA: dict[str, Any] = {
    "produced_at": pl.Datetime("us"),
    "value": pl.Float64,
    "best": pl.Float64,
    "system": pl.String,
    "date_source": pl.String,
}


def history(rows: pl.DataFrame, *, higher_is_better: bool, scale: float = 1.0) -> History:
    """The board's rows (``model``, ``value``, ``is_reference``, ``created_at``, ``metadata_json``) at their production dates.

    Rows without a value are left out of the chart and of the count; ties on a date keep the rows' order.
    """
    points: list[tuple[datetime, float, str, str]] = []
    left_out = 0
    for row in rows.iter_rows(named=True):
        if row.get("value") is None:
            continue
        when, source = produced(row)
        if when is None:
            left_out += 1
            continue
        points.append((when, float(row["value"]) * scale, str(row["model"]), source))
    points.sort(key=lambda p: p[0])
    frame = pl.DataFrame(
        points, schema={k: v for k, v in SCHEMA.items() if k != "best"}, orient="row"
    )
    best = frame["value"].cum_max() if higher_is_better else frame["value"].cum_min()
    return History(frame.with_columns(best.alias("best")).select(list(SCHEMA)), left_out)
