"""The public submission ledger (issue #34): per team and model, what was tried and what was taken down.

For every team, model, task and split with at least one attempt:

* ``attempts``: what reached the scorer, counted as ``max_attempts`` counts it (``procbench.submissions.quotas``): the
  stored original submissions (re-scored copies are not attempts) plus the files refused at validation or
  scoring;
* ``stored``: the stored original submissions, whatever became of them since;
* ``refused``: the files refused at validation or scoring (stages ``validate`` and ``score``).  Refusals
  before the team was known to be who it says (a bad request, a wrong token, a file over the limits, missing
  data) are not a team's attempts and are not counted against it, and neither are intake's own failures;
* ``hidden`` and ``retracted``: stored submissions hidden or deleted now;
* ``events``: every hide, unhide, delete and restore of its submissions, with the date and the reason the
  operator gave (the reason is public: write it for the public).

What it never shows: a score, a figure of any kind, a submission id, an item id, a refusal's own reason
(it may quote the file and name items), or who acted.  So a hidden split publishes through the ledger
nothing beyond what the board already does (counts of attempts are not figures of the split), and a hidden
or deleted submission is a line with a date and a reason, never its numbers.  Papers' rows (``reference``)
are not submissions and are left out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from procbench.submissions.details import REFERENCE_TEAM
from procbench.submissions.store import reader

REFUSED_STAGES = (
    "validate",
    "score",
)  # the failures that count as attempts (procbench.submissions.quotas.COUNTED_FAILURE_STAGES, less reservations)
ACTIONS = (
    "hidden",
    "unhidden",
    "deleted",
    "restored",
)  # the status events of procbench.submissions.admin.apply
FORMATS = ("json", "csv")
SUMMARY_COLUMNS = (
    "team",
    "model",
    "task",
    "split",
    "attempts",
    "stored",
    "refused",
    "hidden",
    "retracted",
    "first_at",
    "last_at",
)
EVENT_COLUMNS = ("team", "model", "task", "split", "action", "reason", "at")

_SUMMARY = f"""
WITH stored AS (
    SELECT team, model, task, split, count(*) AS stored, count(*) FILTER (WHERE hidden AND NOT deleted) AS hidden,
           count(*) FILTER (WHERE deleted) AS retracted, min(created_at) AS first_at, max(created_at) AS last_at
    FROM submissions
    WHERE NOT is_reference AND team <> ? AND origin_id IN (submission_id, '')
    GROUP BY ALL
), refused AS (
    SELECT team, model, task, split, count(*) AS refused, min(created_at) AS first_at, max(created_at) AS last_at
    FROM failures WHERE stage IN ({", ".join("?" for _ in REFUSED_STAGES)}) AND team <> ?
    GROUP BY ALL
)
SELECT team, model, task, split,
       coalesce(s.stored, 0) + coalesce(r.refused, 0) AS attempts, coalesce(s.stored, 0) AS stored, coalesce(r.refused, 0) AS refused,
       coalesce(s.hidden, 0) AS hidden, coalesce(s.retracted, 0) AS retracted,
       least(s.first_at, r.first_at) AS first_at, greatest(s.last_at, r.last_at) AS last_at
FROM stored s FULL JOIN refused r USING (team, model, task, split)
ORDER BY team, model, task, split
"""

_EVENTS = f"""
SELECT s.team, s.model, s.task, s.split, h.status AS action, h.reason, h.changed_at AS at
FROM status_history h JOIN submissions s ON s.submission_id = h.submission_id
WHERE NOT s.is_reference AND s.team <> ? AND s.origin_id IN (s.submission_id, '') AND h.status IN ({", ".join("?" for _ in ACTIONS)})
ORDER BY s.team, s.model, h.changed_at, h.rowid
"""


@dataclass(frozen=True)
class Ledger:
    summary: pl.DataFrame  # SUMMARY_COLUMNS, one row per team, model, task and split
    events: pl.DataFrame  # EVENT_COLUMNS, oldest first within a team and model


def _counts(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        pl.col(c).cast(pl.Int64) for c in ("attempts", "stored", "refused", "hidden", "retracted")
    )


def ledger(db: Path) -> Ledger:
    """The ledger of a store (one read)."""
    with reader(db) as con:
        summary = pl.from_arrow(
            con.sql(
                _SUMMARY, params=[REFERENCE_TEAM, *REFUSED_STAGES, REFERENCE_TEAM]
            ).to_arrow_table()
        )
        events = pl.from_arrow(con.sql(_EVENTS, params=[REFERENCE_TEAM, *ACTIONS]).to_arrow_table())
    assert isinstance(summary, pl.DataFrame) and isinstance(
        events, pl.DataFrame
    )  # a table gives a frame
    return Ledger(_counts(summary).select(SUMMARY_COLUMNS), events.select(EVENT_COLUMNS))


def event_text(action: str, reason: str, at: object) -> str:
    """One event in a line: '2026-01-02 hidden: duplicate of …'."""
    day = at.strftime("%Y-%m-%d") if hasattr(at, "strftime") else str(at)[:10]
    return f"{day} {action}" + (f": {' '.join(reason.split())}" if reason else "")


def with_events(found: Ledger) -> pl.DataFrame:
    """The summary with each row's events in one text column (``events``), for a table or a CSV file."""
    keys = ["team", "model", "task", "split"]
    texts = found.events.with_columns(
        pl.struct("action", "reason", "at")
        .map_elements(
            lambda e: event_text(e["action"], e["reason"], e["at"]), return_dtype=pl.String
        )
        .alias("event")
    )
    joined = (
        texts.group_by(keys, maintain_order=True).agg(
            pl.col("event").str.join("; ").alias("events")
        )
        if texts.height
        else None
    )
    if joined is None:
        return found.summary.with_columns(pl.lit("").alias("events"))
    return found.summary.join(joined, on=keys, how="left", nulls_equal=True).with_columns(
        pl.col("events").fill_null("")
    )


def export_ledger(db: Path, out: Path, *, fmt: str = "") -> int:
    """Write the ledger to ``out`` (``fmt``: json or csv; default from the file's suffix); returns the number of summary rows.

    JSON: ``{"summary": [...], "events": [...]}``; CSV: the summary with each row's events in one ``events`` column.
    """
    fmt = fmt or out.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise ValueError(
            f"unknown ledger format {fmt!r} (one of {', '.join(FORMATS)}; or name the file .json or .csv)"
        )
    found = ledger(db)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        with_events(found).write_csv(out)
    else:
        document = {"summary": found.summary.to_dicts(), "events": found.events.to_dicts()}
        out.write_text(
            json.dumps(document, indent=1, default=str, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return found.summary.height
