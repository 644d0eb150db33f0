"""Export the board (visible submissions, current fingerprints) as CSV, Parquet or JSON with polars."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl

from procbench.submissions.store import reader

FORMATS = ("csv", "parquet", "json")
COLUMNS = (
    "task",
    "split",
    "submission_id",
    "team",
    "model",
    "is_reference",
    "slice",
    "slice_value",
    "metric",
    "value",
    "slice_n_items",
    "n_items",
    "fingerprint",
    "size_class",
    "weights",
    "method_family",
    "paper_url",
    "code_url",
    "description",
    "metadata_json",
    "created_at",
)
# What every row was scored on (migration 004, from the board's task row): real split, sample or unverified data.
PROVENANCE_COLUMNS = ("data_kind", "gold_items", "data_digest", "scorer_digest")


def board_frame(db: Path, task: str | None = None) -> pl.DataFrame:
    """The board view in long form (one row per submission, slice value and metric), what each row was scored on, its coverage (n_answered of n_items)."""
    where, params = ("WHERE b.task = ?", [task]) if task else ("", [])
    with reader(db) as con:
        if (
            task
            and not con.execute("SELECT 1 FROM current_tasks WHERE task = ?", [task]).fetchall()
        ):
            known = ", ".join(
                r[0]
                for r in con.execute(
                    "SELECT DISTINCT task FROM current_tasks ORDER BY task"
                ).fetchall()
            )
            raise LookupError(f"no task {task!r} in {db} (tasks: {known or 'none'})")
        columns = ", ".join(
            [f"b.{c}" for c in COLUMNS] + [f"t.{c}" for c in PROVENANCE_COLUMNS] + [_answered(con)]
        )
        sql = (
            f"SELECT {columns} FROM board b JOIN current_tasks t ON t.task = b.task AND t.split = b.split"
            f" LEFT JOIN submissions s ON s.submission_id = b.submission_id {where}"
            " ORDER BY b.task, b.split, b.slice, b.slice_value, b.metric, b.submission_id"
        )
        return pl.from_arrow(con.sql(sql, params=params).to_arrow_table())  # type: ignore[return-value]


def _answered(con: duckdb.DuckDBPyConnection) -> str:
    """The row's coverage numerator (migration 007: items with a prediction record); NULL in a store that predates it."""
    found = con.execute(
        "SELECT 1 FROM information_schema.columns WHERE table_name = 'submissions' AND column_name = 'n_answered'"
    ).fetchall()
    return "s.n_answered" if found else "NULL::INTEGER AS n_answered"


def export_board(db: Path, out: Path, *, fmt: str, task: str | None = None) -> int:
    """Write the board (or one task of it) to ``out``; returns the number of rows."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    frame = board_frame(db, task)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        frame.write_csv(out)
    elif fmt == "parquet":
        frame.write_parquet(out)
    else:
        frame.write_json(out)
    return frame.height
